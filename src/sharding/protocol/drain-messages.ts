// The drain request and its answer on the wire: kept apart from messages.ts, which routes them, because a
// move list is the one nested shape among the operator messages and is validated item by item here.
import type { RawMessage } from '../../cluster/transport/wire-message.js';
import type { RequestMessage } from './request-message.js';

/** One shard a drain hands off: where from, and where the strategy places it now (null: it waits, e.g. a require pin). */
export interface DrainMove {
  readonly shardId: number;
  readonly from: string;
  readonly to: string | null;
}

/** The field checks of messages.ts, passed in so both files judge fields the same way. */
export interface DrainFieldChecks {
  isRequestId(value: unknown): value is number;
  isShardId(value: unknown): value is number;
  isAddress(value: unknown): value is string;
  readonly maxShards: number;
}

export type DrainMessage =
  /** Requester -> C. Treat `region` as cordoned and hand off every shard it hosts. */
  | RequestMessage<'DrainRegion', { region: string }>
  /** C -> requester. The hand-offs started (`moves`), or none because no other region may take them. */
  | RequestMessage<'DrainStarted', { moves: ReadonlyArray<DrainMove>; noCapacity: boolean }>;

/** A DrainRegion or DrainStarted with every field checked; undefined when any is wrong. */
export function parseDrainMessage(
  raw: RawMessage,
  typeName: string,
  checks: DrainFieldChecks,
): DrainMessage | undefined {
  const requestId = raw['requestId'];
  if (!checks.isRequestId(requestId)) return undefined;
  if (raw.type === 'DrainRegion') {
    const region = raw['region'];
    return checks.isAddress(region) ? { type: 'DrainRegion', typeName, requestId, region } : undefined;
  }
  if (raw.type !== 'DrainStarted') return undefined;
  const noCapacity = raw['noCapacity'];
  const list = raw['moves'];
  if (typeof noCapacity !== 'boolean' || !Array.isArray(list) || list.length > checks.maxShards) return undefined;
  const moves: DrainMove[] = [];
  for (const item of list) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
    const { shardId, from, to } = item as Record<string, unknown>;
    if (!checks.isShardId(shardId) || !checks.isAddress(from) || (to !== null && !checks.isAddress(to)))
      return undefined;
    moves.push({ shardId, from, to });
  }
  return { type: 'DrainStarted', typeName, requestId, moves, noCapacity };
}
