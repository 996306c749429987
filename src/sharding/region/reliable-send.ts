// `EntityRef.ask` and `EntityRef.send` as a node runs them. An ask goes once (at most once); a send resolves
// once its entity processed it and is retried by this node's region until then (reliable-delivery.ts). Both
// reject with `timeout` past their deadline, saying whether the message (any copy of it) left this node, and
// with `buffer_overflow` at once over the bounds; `entity_failed` when `receive` threw (a send was processed
// then: it is not retried).
import { ActorTsError } from '../../errors.js';
import type { ShardingConfig } from '../core/config.js';
import type { AskOptions, SendOptions } from '../core/entity-api.js';
import type { PendingAsks, Settled } from './pending-asks.js';
import type { ShardRegion } from './shard-region.js';

export type { SendOptions };

export interface SendContext {
  readonly asks: PendingAsks;
  readonly selfKey: string;
  readonly config: Pick<ShardingConfig, 'askTimeoutMs' | 'sendTimeoutMs' | 'bufferSize'>;
  /** A send passed its deadline; `delivered` as the error says. */
  readonly onTimeout?: (typeName: string, delivered: boolean) => void;
}

type Target = { readonly shardId: number; readonly entityId: string };

export function sendReliably(
  context: SendContext,
  region: ShardRegion,
  target: Target,
  message: unknown,
  options: SendOptions = {},
): Promise<void> {
  const { typeName } = region;
  // However it ends, the send is closed here then: taken back from the buffer, never retried again. Its
  // answer carries no value (the host replies null): its caller gets none.
  const settled: Settled = (id, { answered, timedOut }) => {
    // At the deadline it was withdrawn already, to learn whether it had left.
    if (timedOut === undefined) region.withdraw(id);
    else context.onTimeout?.(typeName, timedOut.delivered);
    if (answered) region.answered(target.shardId);
  };
  const opened = openRequest<void>('send', context, region, target, options.timeoutMs, { settled, valueless: true });
  if (opened instanceof Error) return Promise.reject(opened);
  const { id, answer } = opened;
  const result = region.openSend(target.shardId, target.entityId, message, { node: context.selfKey, askId: id });
  if (result === 'dropped')
    refuse(
      context,
      id,
      `send to ${typeName}/${target.entityId} refused: too many sends outstanding or the region buffer is full`,
    );
  return answer;
}

export function askAtMostOnce<R>(
  context: SendContext,
  region: ShardRegion,
  target: Target,
  message: unknown,
  options: AskOptions = {},
): Promise<R> {
  const settled: Settled = (_id, { answered }) => {
    if (answered) region.answered(target.shardId);
  };
  const opened = openRequest<R>('ask', context, region, target, options.timeoutMs, { settled });
  if (opened instanceof Error) return Promise.reject(opened);
  const { id, answer } = opened;
  const replyTo = { node: context.selfKey, askId: id };
  const { shardId, entityId } = target;
  const result = region.deliver({ shardId, entityId, payload: message, hops: 0, replyTo });
  if (result === 'dropped') {
    const { typeName } = region;
    refuse(
      context,
      id,
      `message to ${typeName}/${target.entityId} dropped: region buffer full (bufferSize ${context.config.bufferSize})`,
    );
  }
  return answer;
}

/** Opens the ask or send with its deadline (the configured default unless given); an Error when that is invalid. */
function openRequest<R>(
  what: 'ask' | 'send',
  context: SendContext,
  region: ShardRegion,
  target: Target,
  timeout: number | undefined,
  hooks: { readonly settled?: Settled; readonly valueless?: boolean } = {},
): { readonly id: number; readonly answer: Promise<R> } | ActorTsError {
  const timeoutMs = timeout ?? (what === 'ask' ? context.config.askTimeoutMs : context.config.sendTimeoutMs);
  if (!validTimeout(timeoutMs)) return invalidTimeout(what, timeoutMs);
  const describe = (): string => `${what} to ${region.typeName}/${target.entityId} timed out after ${timeoutMs} ms`;
  return context.asks.open<R>(timeoutMs, describe, (askId) => region.withdraw(askId), hooks);
}

function refuse(context: SendContext, id: number, error: string): void {
  context.asks.settle(id, { ok: false, error }, 'buffer_overflow');
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
