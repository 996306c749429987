// How slots that this replica did not just write itself come to count: a transaction on the current document
// (a remote value passes admission.ts first), a base merged from a peer, and a late update to the previous
// generation's document, folded into the base. Each ends in the Settler (settle.ts), like a local write.
import type * as Y from 'yjs';
import type { Admission } from './admission.js';
import { shareName } from './bytes.js';
import type { Generations } from './generations.js';
import type { PlacementLog } from './log.js';
import type { Settler } from './settle.js';
import { changedSlots } from './slot-reads.js';
import { BASE_WRITER, type SlotChange } from './snapshot.js';
import type { BaseEntries } from './wire.js';

/** The store's parts every path of intake reads. */
export interface IntakeContext {
  readonly state: Generations;
  readonly admission: Admission;
  readonly settler: Settler;
  readonly log: PlacementLog;
}

/** Merges a peer's base slots that admission lets count, and settles those that changed the base. */
export function mergeBase(context: IntakeContext, entries: readonly BaseEntries[]): void {
  const { state, admission, settler } = context;
  const work = settler.newWork();
  for (const { typeName, slots } of entries) {
    const changes: SlotChange[] = [];
    for (const slot of slots) {
      if (!admission.admit(typeName, slot, 'base')) continue;
      if (state.base.merge(typeName, slot)) changes.push({ shardId: slot.shardId, writer: BASE_WRITER, slot });
    }
    if (changes.length > 0) settler.settle(typeName, changes, true, work);
  }
  settler.finish(work);
}

/** A peer still on the previous generation wrote: what it wrote counts, folded into the base. */
export function foldLateUpdate(context: IntakeContext, transaction: Y.Transaction): void {
  const changed = changedSlots(transaction, (type) => shareName(transaction.doc, type), context.log);
  mergeBase(
    context,
    changed.map(({ typeName, slots }) => ({
      typeName,
      slots: slots.flatMap(({ slot }) => (slot === undefined ? [] : [slot])),
    })),
  );
}

/** Settles the slots a transaction on the current document changed; a remote one's values pass admission first. */
export function settleTransaction(context: IntakeContext, transaction: Y.Transaction, remote: boolean): void {
  const { state, admission, settler, log } = context;
  const work = settler.newWork();
  for (const { typeName, slots } of changedSlots(transaction, (type) => state.typeNameOf(type), log)) {
    for (const { shardId, writer } of slots) admission.forget(typeName, shardId, writer);
    // Local transactions write only this node's own, in-range slots (or delete refused ones).
    const changes = slots.map(({ shardId, writer, slot }) => ({
      shardId,
      writer,
      slot: slot !== undefined && (!remote || admission.admit(typeName, slot, 'document')) ? slot : undefined,
    }));
    settler.settle(typeName, changes, remote, work);
  }
  settler.finish(work);
}
