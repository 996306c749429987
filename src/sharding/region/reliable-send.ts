// `EntityRef.send`: a message that resolves once its entity processed it and is retried by this node's
// region until then (reliable-delivery.ts), or rejects: `timeout` past its deadline (saying whether any copy
// left this node), `buffer_overflow` at once over the bounds, `entity_failed` when `receive` threw (it was
// processed: not retried).
import { ActorTsError } from '../../errors.js';
import type { PendingAsks } from './pending-asks.js';
import { DeliveryTimeoutError } from './pending-asks.js';
import type { ShardRegion } from './shard-region.js';

export interface SendOptions {
  /** Reject with `timeout` after this long; default `ShardingConfig.sendTimeoutMs` (60 s). */
  readonly timeoutMs?: number;
}

export interface SendContext {
  readonly asks: PendingAsks;
  readonly selfKey: string;
  readonly defaultTimeoutMs: number;
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
  const timeoutMs = options.timeoutMs ?? context.defaultTimeoutMs;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2_147_483_647) {
    return Promise.reject(new ActorTsError('invalid_argument', `send timeoutMs must be an integer in 1..2147483647, got ${String(timeoutMs)}`));
  }
  const { typeName } = region;
  const { shardId, entityId } = target;
  // At the deadline the send is closed here: taken back from the buffer, never retried again.
  const { id, answer } = context.asks.open<unknown>(timeoutMs, () => `send to ${typeName}/${entityId} timed out after ${timeoutMs} ms`, (askId) =>
    region.closeSend(askId),
  );
  const result = region.openSend(shardId, entityId, message, { node: context.selfKey, askId: id });
  if (result === 'dropped') {
    const error = `send to ${typeName}/${entityId} refused: too many sends outstanding or the region buffer is full`;
    context.asks.settle(id, { ok: false, error }, 'buffer_overflow');
  }
  return answer.then(
    () => {
      region.closeSend(id);
    },
    (error: unknown) => {
      region.closeSend(id);
      if (error instanceof DeliveryTimeoutError) context.onTimeout?.(typeName, error.delivered);
      throw error;
    },
  );
}
