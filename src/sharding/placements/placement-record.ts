// How a stored placement is listed (API, CLI, controller): every field of the pin, the expiry as ISO-8601,
// and, when expired pins are asked for, whether it expired.
import type { Placement, PlacementStore } from '../../../crdt/index.js';
import { isExpired, ruleOf } from './placement-options.js';
import type { PinRecord } from './pin-shape.js';

/** One shard's placement as the store holds it (its shape declared once, in pin-shape.ts). */
export type { PinRecord };

/** Options of pinRecords. */
export interface PinRecordsOptions {
  /** Also list pins whose expiry has passed, each with `expired`. Default false. */
  readonly includeExpired?: boolean;
  /** The clock reading expiry is judged by (epoch ms). Default Date.now(). */
  readonly now?: number;
}

/** Every placement of a type in `store`, by ascending shard id; expired ones only with includeExpired. */
export function pinRecords(store: PlacementStore, typeName: string, options: PinRecordsOptions = {}): PinRecord[] {
  const now = options.now ?? Date.now();
  const includeExpired = options.includeExpired === true;
  const records: PinRecord[] = [];
  for (const [shardId, placement] of store.snapshot(typeName).placements) {
    const expired = isExpired(ruleOf(placement), now);
    if (expired && !includeExpired) continue;
    const record = pinRecordOf(shardId, placement);
    records.push(includeExpired ? { ...record, expired } : record);
  }
  return records.sort((a, b) => a.shardId - b.shardId);
}

/** One shard's placement as a listing without expired pins shows it, or undefined. */
export function listedPlacement(
  store: PlacementStore,
  typeName: string,
  shardId: number,
  now: number,
): PinRecord | undefined {
  const placement = store.snapshot(typeName).placements.get(shardId);
  if (placement === undefined || isExpired(ruleOf(placement), now)) return undefined;
  return pinRecordOf(shardId, placement);
}

export function pinRecordOf(shardId: number, placement: Placement): PinRecord {
  const { mode, expiresAt, reason, by } = ruleOf(placement);
  return {
    shardId,
    target: placement.target,
    mode,
    expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString(),
    reason,
    by,
    writer: placement.writer,
    hlc: placement.hlc,
  };
}
