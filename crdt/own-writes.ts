// What this incarnation last wrote into each of its slots, to notice a write lost to a Yjs conflict with
// an earlier incarnation of the same node (another Yjs client writing the same slot key).
import { compareHlc, type Hlc } from './hlc.js';
import type { SlotMeta } from './slot-meta.js';
import { compareSlots, type Slot } from './slots.js';

export interface OwnWrite {
  readonly target: string | null;
  readonly hlc: Hlc;
  readonly meta?: SlotMeta;
  readonly over?: Hlc;
}

export class OwnWrites {
  private readonly writes = new Map<string, OwnWrite>();

  get(typeName: string, shardId: number): OwnWrite | undefined {
    return this.writes.get(key(typeName, shardId));
  }

  set(typeName: string, shardId: number, write: OwnWrite): void {
    this.writes.set(key(typeName, shardId), write);
  }

  delete(typeName: string, shardId: number): void {
    this.writes.delete(key(typeName, shardId));
  }

  /** Compaction: own writes now live in the base, where hlc alone decides; nothing left to protect. */
  clear(): void {
    this.writes.clear();
  }

  /**
   * This node's write to a slot that a remote update just replaced by an older value or removed. That
   * happens only when an earlier incarnation of this node (another Yjs client) wrote the same slot
   * concurrently, e.g. after a restart with an empty document: Yjs then picks the survivor by client id,
   * not by hlc. The write is re-asserted unless a greater slot exists anyway.
   */
  lost(typeName: string, shardId: number, own: Slot | undefined, winner: Slot | undefined): OwnWrite | undefined {
    const mine = this.get(typeName, shardId);
    if (mine === undefined) return undefined;
    if (own !== undefined && compareHlc(own.hlc, mine.hlc) >= 0) return undefined;
    if (winner !== undefined && compareSlots(winner, { ...mine, shardId, writer: mine.hlc.node }) > 0) {
      this.delete(typeName, shardId);
      return undefined;
    }
    return mine;
  }
}

function key(typeName: string, shardId: number): string {
  return `${typeName}\u0000${shardId}`;
}
