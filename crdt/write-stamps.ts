// The timestamps of local writes: each is max(clock.tick(), successor(own slot), successor(winner)), over
// admitted values only, so a write made after seeing the current value wins on every replica whatever the
// wall clocks say, while a refused far-future value can neither win nor drag a write out of range. A write
// made while this replica holds such a value, or over a winner that carries an `over` mark, carries the
// greatest of those as its own mark (slots.ts), so the held value never overrides it anywhere.
import { MAX_HLC_WALL_MS, PlacementStoreError } from './errors.js';
import { inRange } from './admission.js';
import { compareHlc, successor, type HybridLogicalClock, type Hlc } from './hlc.js';
import type { SnapshotIndex } from './snapshot.js';
import { rankOf } from './slots.js';

/** A write's timestamp, and the `over` mark it carries (only when greater than the timestamp). */
export interface Stamp {
  readonly hlc: Hlc;
  readonly over?: Hlc;
}

/**
 * One timestamp per write, in order; a shard named twice gets increasing ones. Throws `hlc_out_of_range`
 * when a write would need a timestamp beyond MAX_HLC_WALL_MS: the caller has written nothing yet.
 */
export function stampWrites(
  typeName: string,
  shardIds: readonly number[],
  clock: HybridLogicalClock,
  index: SnapshotIndex,
  ownBase: (shardId: number) => Hlc | undefined,
  held: (shardId: number) => Hlc | undefined = () => undefined,
): Stamp[] {
  const batch = new Map<number, Hlc>();
  return shardIds.map((shardId): Stamp => {
    let hlc = clock.tick();
    const winner = index.winner(shardId);
    for (const seen of [batch.get(shardId) ?? ownBase(shardId), winner?.hlc]) {
      if (seen !== undefined && compareHlc(hlc, seen) <= 0) hlc = successor(seen, clock.node);
    }
    const over = laterHlc(winner === undefined ? undefined : rankOf(winner), held(shardId));
    if (!inRange(hlc)) {
      throw new PlacementStoreError(
        'hlc_out_of_range',
        `cannot write ${typeName} shard ${shardId}: it needs timestamp wallMs ${hlc.wallMs}, beyond the limit ` +
          `${MAX_HLC_WALL_MS} (is this node's clock far in the future?); nothing was written`,
      );
    }
    batch.set(shardId, hlc);
    return over !== undefined && compareHlc(over, hlc) > 0 ? { hlc, over } : { hlc };
  });
}

/** The greater of two optional timestamps. */
export function laterHlc(a: Hlc | undefined, b: Hlc | undefined): Hlc | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return compareHlc(a, b) >= 0 ? a : b;
}
