// This replica's own writes: the slots of one type written in one transaction, each under this node's key with a
// timestamp that beats every admitted value (write-stamps.ts), remembered in OwnWrites so that a later
// incarnation's hidden write can be re-asserted. A forced write also deletes the shard's refused values.
import type { Admission } from './admission.js';
import type { Generations } from './generations.js';
import type { HybridLogicalClock, Hlc } from './hlc.js';
import type { OwnWrites } from './own-writes.js';
import { deleteSlotIfSame } from './slot-reads.js';
import { encodeSlotValue, slotKey, type SlotWrite } from './slots.js';
import { laterHlc, stampWrites, type Stamp } from './write-stamps.js';

export interface LocalWriteContext {
  readonly node: string;
  readonly state: Generations;
  readonly clock: HybridLogicalClock;
  readonly ownWrites: OwnWrites;
  readonly admission: Admission;
  /** The origin own writes are made under. */
  readonly localOrigin: symbol;
}

/** A write of a target (with its meta), or of a tombstone (`null`). */
export type LocalWrite = SlotWrite | readonly [shardId: number, target: null];

/**
 * Writes slots of one type in one transaction; returns each write's hlc. Throws (and writes nothing) when a
 * write cannot win (unless `force`) or would need a timestamp out of range.
 */
export function writeLocal(
  context: LocalWriteContext,
  typeName: string,
  writes: readonly LocalWrite[],
  force: boolean,
): Hlc[] {
  const { node, state, clock, ownWrites, admission } = context;
  if (!force)
    admission.assertCanWin(
      typeName,
      writes.map(([shardId]) => shardId),
    );
  const map = state.mapFor(typeName);
  const index = state.indexFor(typeName);
  // The own slot's admitted hlc, or this incarnation's latest write when it is not indexed yet.
  const ownBase = (shardId: number) => laterHlc(index.slot(shardId, node)?.hlc, ownWrites.get(typeName, shardId)?.hlc);
  // Values held here for being far ahead are written over (slots.ts `over`), so they never win later.
  const held = (shardId: number) => admission.heldFor(typeName, shardId)?.hlc;
  const stamps = stampWrites(
    typeName,
    writes.map(([shardId]) => shardId),
    clock,
    index,
    ownBase,
    held,
  );
  const refused = force ? writes.flatMap(([shardId]) => admission.takeShard(typeName, shardId)) : [];
  state.doc.transact(() => {
    for (const entry of refused) if (entry.where === 'document') deleteSlotIfSame(map, entry.slot);
    writes.forEach(([shardId, target, meta], i) => {
      const { hlc, over } = stamps[i] as Stamp;
      map.set(slotKey(shardId, node), encodeSlotValue(target, hlc, meta, over));
      ownWrites.set(typeName, shardId, {
        target,
        hlc,
        ...(meta === undefined ? {} : { meta }),
        ...(over === undefined ? {} : { over }),
      });
    });
  }, context.localOrigin);
  return stamps.map((stamp) => stamp.hlc);
}
