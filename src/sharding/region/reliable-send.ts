// `EntityRef.ask` and `EntityRef.send` as a node runs them. An ask goes once (at most once); a send resolves
// once its entity processed it and is retried by this node's region until then (reliable-delivery.ts). Both
// reject with `timeout` past their deadline, saying whether the message (any copy of it) left this node, and
// with `buffer_overflow` at once over the bounds; `entity_failed` when `receive` threw (a send was processed
// then: it is not retried).
import { ActorTsError } from '../../errors.js';
import type { ShardingConfig } from '../config.js';
import type { AskOptions, SendOptions } from './entity.js';
import type { PendingAsks } from './pending-asks.js';
import { DeliveryTimeoutError } from './pending-asks.js';
import type { ShardRegion } from './shard-region.js';

export type { SendOptions };

export interface SendContext {
  readonly asks: PendingAsks;
  readonly selfKey: string;
  readonly config: Pick<ShardingConfig, 'askTimeoutMs' | 'sendTimeoutMs' | 'bufferSize'>;
  /** A send passed its deadline; `delivered` as the error says. */
  readonly onTimeout?: (typeName: string, delivered: boolean) => void;
}

export function sendReliably(
  context: SendContext,
  region: ShardRegion,
  target: { readonly shardId: number; readonly entityId: string },
  message: unknown,
  options: SendOptions = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? context.config.sendTimeoutMs;
  if (!validTimeout(timeoutMs)) return Promise.reject(invalidTimeout('send', timeoutMs));
  const { typeName } = region;
  const { shardId, entityId } = target;
  // At the deadline the send is closed here: taken back from the buffer, never retried again.
  const { id, answer } = context.asks.open<unknown>(
    timeoutMs,
    () => `send to ${typeName}/${entityId} timed out after ${timeoutMs} ms`,
    (askId) => region.withdraw(askId),
  );
  const result = region.openSend(shardId, entityId, message, { node: context.selfKey, askId: id });
  if (result === 'dropped') {
    const error = `send to ${typeName}/${entityId} refused: too many sends outstanding or the region buffer is full`;
    context.asks.settle(id, { ok: false, error }, 'buffer_overflow');
  }
  return answer.then(
    () => {
      region.withdraw(id);
    },
    (error: unknown) => {
      region.withdraw(id);
      if (error instanceof DeliveryTimeoutError) context.onTimeout?.(typeName, error.delivered);
      throw error;
    },
  );
}

export function askAtMostOnce<R>(
  context: SendContext,
  region: ShardRegion,
  target: { readonly shardId: number; readonly entityId: string },
  message: unknown,
  options: AskOptions = {},
): Promise<R> {
  const timeoutMs = options.timeoutMs ?? context.config.askTimeoutMs;
  if (!validTimeout(timeoutMs)) return Promise.reject(invalidTimeout('ask', timeoutMs));
  const { typeName } = region;
  const { shardId, entityId } = target;
  const describe = (): string => `ask to ${typeName}/${entityId} timed out after ${timeoutMs} ms`;
  const { id, answer } = context.asks.open<R>(timeoutMs, describe, (askId) => region.withdraw(askId));
  const result = region.deliver({
    shardId,
    entityId,
    payload: message,
    hops: 0,
    replyTo: { node: context.selfKey, askId: id },
  });
  if (result === 'dropped') {
    const error = `message to ${typeName}/${entityId} dropped: region buffer full (bufferSize ${context.config.bufferSize})`;
    context.asks.settle(id, { ok: false, error }, 'buffer_overflow');
  }
  return answer;
}

function validTimeout(timeoutMs: unknown): timeoutMs is number {
  return Number.isInteger(timeoutMs) && (timeoutMs as number) >= 1 && (timeoutMs as number) <= 2_147_483_647;
}

function invalidTimeout(what: string, timeoutMs: unknown): ActorTsError {
  return new ActorTsError(
    'invalid_argument',
    `${what} timeoutMs must be an integer in 1..2147483647, got ${String(timeoutMs)}`,
  );
}
