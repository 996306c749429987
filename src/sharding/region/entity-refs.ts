// Entity references and the asks and sends made through them: a reference routes through its type's region; an
// ask or a send waits in PendingAsks for its answer (reliable-send.ts says how each goes and fails), which comes
// back here (this node's asks) or goes over the wire (answers without a value coalesced, reply-coalescer.ts).
import type { ShardingConfig } from '../core/config.js';
import { MAX_ERROR_LENGTH, type MessageRoutedTo, type ReplyTo, type ShardingMessage } from '../protocol/messages.js';
import { isReplyCode } from '../protocol/entity-messages.js';
import { shardIdFor, type ShardIdFunction } from '../core/shard-id.js';
import type { AskOptions, EntityOutcome, EntityRef, HostOutcome, SendOptions } from '../core/entity-api.js';
import type { Scheduler } from '../../cluster/scheduler.js';
import { PendingAsks } from './pending-asks.js';
import { askAtMostOnce, sendReliably, type SendContext } from './reliable-send.js';
import { ReplyCoalescer } from './reply-coalescer.js';
import type { ShardRegion } from './shard-region.js';

export interface EntityRefsOptions {
  readonly selfKey: string;
  readonly config: Pick<ShardingConfig, 'askTimeoutMs' | 'sendTimeoutMs' | 'bufferSize'>;
  /** The clock and timers of the asks' deadlines; default systemScheduler. */
  readonly scheduler?: Scheduler;
  /** Sends unless stopped; false when the message was refused. */
  readonly send: (to: string, message: ShardingMessage) => boolean;
  /** Throws `not_running` once sharding was shut down. */
  readonly requireRunning: () => void;
  /** A send passed its deadline; `delivered` as the error says. */
  readonly onSendTimeout?: (typeName: string, delivered: boolean) => void;
}

/** What a reference needs of its type: its name, shard count and region. */
export interface RefTarget {
  readonly typeName: string;
  readonly numberOfShards: number;
  readonly shardIdFunction: ShardIdFunction;
  readonly region: ShardRegion;
}

/** What a reference needs of an initialised type (its settings and its region on this node). */
export function refTarget(type: {
  readonly settings: Pick<RefTarget, 'typeName' | 'numberOfShards' | 'shardIdFunction'>;
  readonly region: ShardRegion;
}): RefTarget {
  const { typeName, numberOfShards, shardIdFunction } = type.settings;
  return { typeName, numberOfShards, shardIdFunction, region: type.region };
}

export class EntityRefs {
  private readonly asks: PendingAsks;
  private readonly context: SendContext;
  private readonly replies: ReplyCoalescer;

  constructor(private readonly options: EntityRefsOptions) {
    this.asks = new PendingAsks(options.scheduler);
    this.replies = new ReplyCoalescer(options.send);
    this.context = {
      asks: this.asks,
      selfKey: options.selfKey,
      config: options.config,
      ...(options.onSendTimeout === undefined ? {} : { onTimeout: options.onSendTimeout }),
    };
  }

  get timedOut(): number {
    return this.asks.timedOut;
  }

  /** A reference to `entityId` (already checked by the caller). */
  refFor(type: RefTarget, entityId: string): EntityRef {
    const { typeName } = type;
    const shardId = shardIdFor(entityId, type.numberOfShards, type.shardIdFunction);
    return {
      typeName,
      entityId,
      shardId,
      tell: (message: unknown): void => {
        this.options.requireRunning();
        type.region.deliver({ shardId, entityId, payload: message, hops: 0 });
      },
      ask: <R = unknown>(message: unknown, options?: AskOptions): Promise<R> =>
        this.running() ?? askAtMostOnce<R>(this.context, type.region, { shardId, entityId }, message, options),
      send: (message: unknown, options?: SendOptions): Promise<void> =>
        this.running() ?? sendReliably(this.context, type.region, { shardId, entityId }, message, options),
    };
  }

  /** Delivers an entity's answer to the asking node. */
  reply(replyTo: ReplyTo, outcome: HostOutcome): void {
    const { selfKey, send } = this.options;
    if (replyTo.node === selfKey) {
      this.asks.settle(replyTo.askId, outcome);
      return;
    }
    if (outcome.ok && outcome.value === null) {
      this.replies.add(replyTo.node, replyTo.askId);
      return;
    }
    const code = !outcome.ok && 'code' in outcome && isReplyCode(outcome.code) ? { code: outcome.code } : {};
    const failure = (error: string): ShardingMessage => ({
      type: 'EntityReply',
      askId: replyTo.askId,
      ok: false,
      error: error.slice(0, MAX_ERROR_LENGTH),
      ...code,
    });
    if (outcome.ok) {
      const sent = send(replyTo.node, { type: 'EntityReply', askId: replyTo.askId, ok: true, value: outcome.value });
      // An answer the wire cannot carry still owes the asker an answer, rather than a timeout.
      if (!sent) send(replyTo.node, failure('the entity answered with a value that cannot be serialised'));
    } else {
      send(replyTo.node, failure(outcome.error));
    }
  }

  /** Answers that arrived from another node for this node's asks (one, or many answered null). */
  received(message: MessageRoutedTo<'asker'>): void {
    if (message.type === 'EntityReplies') {
      for (const askId of message.askIds) this.asks.settle(askId, ANSWERED_NULL);
    } else if (message.ok) {
      this.asks.settle(message.askId, { ok: true, value: message.value });
    } else {
      const { error, code } = message;
      this.asks.settle(message.askId, code === undefined ? { ok: false, error } : { ok: false, error, code });
    }
  }

  /** Sends the coalesced answers now (sharding is stopping: later they could not go). */
  flushReplies(): void {
    this.replies.flush();
  }

  failAll(error: Error): void {
    this.asks.failAll(error);
  }

  /** A rejection once sharding was shut down, else undefined. */
  private running(): Promise<never> | undefined {
    try {
      this.options.requireRunning();
      return undefined;
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }
}

const ANSWERED_NULL: EntityOutcome = { ok: true, value: null };
