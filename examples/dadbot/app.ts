// DadBot as an application of @actor-ts/placement: the Dad entity type and, on every node, the chat webhook
// (`POST /chats/:chatId/messages`, answered 202 without waiting for the Dad) and `GET /chats/:chatId` (the
// Dad's host, state and what he told). `startNode({ ...config, entityStore, ...dadbot() })` runs it: the Dad is
// durable, his memory committed to the node's entity store after every message.
import { defineEntityType, type NodeEntityType, type NodeHttpRoutes } from '@actor-ts/placement';
import { DAD_TYPE, dadBehavior, dadCommandSchema, type DadCommand, type DadEvent, type DadStatus } from './dad.js';
import { PunGenerator } from './puns.js';

/** Dads run only on nodes with this role; a node without it (a gateway) routes chats and hosts none. */
export const DAD_ROLE = 'dad';

export interface DadbotOptions {
  readonly quietMs?: number;
  /** How long the pun generator thinks; default 2,000 ms. */
  readonly thinkMs?: number;
  readonly onEvent?: (event: DadEvent) => void;
  /**
   * Commit the Dad's memory after every message (the node needs an `entityStore`), so a crash of his host costs
   * no joke told and no message heard; default true. False: his memory moves only with a graceful move.
   */
  readonly durable?: boolean;
}

export interface DadbotApplication {
  readonly entityTypes: NodeEntityType[];
  readonly httpRoutes: NodeHttpRoutes;
}

/** The webhook's answer: the chat and the shard its Dad lives in. */
export interface Accepted {
  readonly chatId: string;
  readonly shardId: number;
}

const chatParams = {
  type: 'object',
  required: ['chatId'],
  properties: { chatId: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;

const messageBody = {
  type: 'object',
  required: ['from', 'text'],
  additionalProperties: false,
  properties: {
    from: { type: 'string', minLength: 1, maxLength: 200 },
    text: { type: 'string', minLength: 1, maxLength: 4_000 },
  },
} as const;

export function dadbot(options: DadbotOptions = {}): DadbotApplication {
  const behavior = dadBehavior({
    ...(options.quietMs === undefined ? {} : { quietMs: options.quietMs }),
    puns: new PunGenerator(options.thinkMs ?? 2_000),
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
  });
  const Dad = defineEntityType({
    typeName: DAD_TYPE,
    message: dadCommandSchema,
    behavior,
    numberOfShards: 1000,
    role: DAD_ROLE,
    durable: options.durable ?? true,
  });
  const httpRoutes: NodeHttpRoutes = (app, node) => {
    app.post<{ Params: { chatId: string }; Body: { from: string; text: string } }>(
      '/chats/:chatId/messages',
      { schema: { params: chatParams, body: messageBody } },
      async (request, reply) => {
        const { chatId } = request.params;
        // Typed by the Dad's message schema: only a DadCommand compiles here.
        const dad = node.sharding.entityRefFor(Dad, chatId);
        const command: DadCommand = { type: 'NewMessage', from: request.body.from, text: request.body.text };
        // Answered once the Dad has the message (a reliable send: retried across moves and a crash of his host,
        // at least once), never after his joke. A send past its deadline is a 504 saying whether it left here.
        await dad.send(command, { timeoutMs: 30_000 });
        const accepted: Accepted = { chatId, shardId: dad.shardId };
        return reply.code(202).send(accepted);
      },
    );
    app.get<{ Params: { chatId: string } }>('/chats/:chatId', { schema: { params: chatParams } }, async (request) => {
      const status = await node.sharding
        .entityRefFor(DAD_TYPE, request.params.chatId)
        .ask<DadStatus>({ type: 'Status' } satisfies DadCommand);
      return { chatId: status.chatId, node: status.node, state: status.state, told: status.told };
    });
  };
  return { entityTypes: [Dad], httpRoutes };
}
