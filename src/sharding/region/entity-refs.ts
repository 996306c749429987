// Entity references and the asks made through them: a reference routes through its type's region; an ask
// waits in PendingAsks for the answer, which comes back here (this node's asks) or goes over the wire.
import { ActorTsError } from '../../errors.js';
import { MAX_ERROR_LENGTH, type ReplyTo, type ShardingMessage } from '../protocol/messages.js';
import { shardIdFor, type ShardIdFunction } from '../shard-id.js';
import type { AskOptions, EntityOutcome, EntityRef } from './entity.js';
import { PendingAsks } from './pending-asks.js';
import type { DeliveryResult } from './shard-region.js';
import type { Envelope } from './region-buffer.js';

export interface EntityRefsOptions {
  readonly selfKey: string;
  readonly askTimeoutMs: number;
  readonly bufferSize: number;
  /** Sends unless stopped; false when the message was refused. */
  readonly send: (to: string, message: ShardingMessage) => boolean;
  /** Throws `not_running` once sharding was shut down. */
  readonly requireRunning: () => void;
}

/** What a reference needs of its type: its name, shard count and region. */
export interface RefTarget {
  readonly typeName: string;
  readonly numberOfShards: number;
  readonly shardIdFunction: ShardIdFunction;
  readonly region: { deliver(envelope: Envelope): DeliveryResult };
}

export class EntityRefs {
  private readonly asks = new PendingAsks();

  constructor(private readonly options: EntityRefsOptions) {}

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
      ask: <R = unknown>(message: unknown, options: AskOptions = {}): Promise<R> => this.ask<R>(type, shardId, entityId, message, options),
    };
  }

  /** Delivers an entity's answer to the asking node. */
  reply(replyTo: ReplyTo, outcome: EntityOutcome): void {
    const { selfKey, send } = this.options;
    if (replyTo.node === selfKey) {
      this.asks.settle(replyTo.askId, outcome);
      return;
    }
    const failure = (error: string): ShardingMessage => ({ type: 'EntityReply', askId: replyTo.askId, ok: false, error: error.slice(0, MAX_ERROR_LENGTH) });
    if (outcome.ok) {
      const sent = send(replyTo.node, { type: 'EntityReply', askId: replyTo.askId, ok: true, value: outcome.value });
      // An answer the wire cannot carry still owes the asker an answer, rather than a timeout.
      if (!sent) send(replyTo.node, failure('the entity answered with a value that cannot be serialised'));
    } else {
      send(replyTo.node, failure(outcome.error));
    }
  }

  /** An answer that arrived from another node for one of this node's asks. */
  settle(askId: number, outcome: EntityOutcome): void {
    this.asks.settle(askId, outcome);
  }

  failAll(error: Error): void {
    this.asks.failAll(error);
  }

  private ask<R>(type: RefTarget, shardId: number, entityId: string, message: unknown, options: AskOptions): Promise<R> {
    try {
      this.options.requireRunning();
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const timeoutMs = options.timeoutMs ?? this.options.askTimeoutMs;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2_147_483_647) {
      return Promise.reject(new ActorTsError('invalid_argument', `ask timeoutMs must be an integer in 1..2147483647, got ${String(timeoutMs)}`));
    }
    const { typeName } = type;
    const { id, answer } = this.asks.open<R>(timeoutMs, () => `ask to ${typeName}/${entityId} timed out after ${timeoutMs} ms`);
    const result = type.region.deliver({ shardId, entityId, payload: message, hops: 0, replyTo: { node: this.options.selfKey, askId: id } });
    if (result === 'dropped') {
      const error = `message to ${typeName}/${entityId} dropped: region buffer full (bufferSize ${this.options.bufferSize})`;
      this.asks.settle(id, { ok: false, error }, 'buffer_overflow');
    }
    return answer;
  }
}
