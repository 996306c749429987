// Releases the values admission.ts held for being ahead of the clock once the clock has reached them: each then
// counts as if it had just arrived, in the base or in the document it was written to, and is settled like any
// other change. Called before every read and write of the store, so a held value is released on time.
import { compareHlc } from './hlc.js';
import type { IntakeContext } from './intake.js';
import { readSlot } from './slot-reads.js';
import { BASE_WRITER, type SlotChange } from './snapshot.js';
import { slotKey } from './slots.js';

export interface HeldReleaseContext extends IntakeContext {
  /** A change listener is running: nothing is released from inside it. */
  readonly busy: () => boolean;
}

export class HeldRelease {
  private releasing = false;

  constructor(private readonly context: HeldReleaseContext) {}

  /** Lets held values the clock has reached count, as if they had just arrived. */
  releaseDue(): void {
    const { state, admission, settler, log } = this.context;
    if (this.releasing || this.context.busy()) return;
    const due = admission.due();
    if (due.length === 0) return;
    this.releasing = true;
    try {
      const byType = new Map<string, SlotChange[]>();
      for (const { typeName, slot, where } of due) {
        let change: SlotChange | undefined;
        if (where === 'base') {
          if (state.base.merge(typeName, slot)) change = { shardId: slot.shardId, writer: BASE_WRITER, slot };
        } else {
          const current = readSlot(
            state.mapFor(typeName),
            slotKey(slot.shardId, slot.writer),
            slot.shardId,
            slot.writer,
            log,
          );
          if (current !== undefined && compareHlc(current.hlc, slot.hlc) === 0)
            change = { shardId: slot.shardId, writer: slot.writer, slot: current };
        }
        if (change !== undefined) byType.set(typeName, [...(byType.get(typeName) ?? []), change]);
      }
      const work = settler.newWork();
      for (const [typeName, changes] of byType) settler.settle(typeName, changes, true, work);
      settler.finish(work);
    } finally {
      this.releasing = false;
    }
  }
}
