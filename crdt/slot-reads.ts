// Reading slots back out of a Yjs document: one slot by key, and every slot a transaction changed,
// grouped by entity type (before the timestamp rule decides which of them count).
import * as Y from 'yjs';
import type { PlacementLog } from './log.js';
import { compareSlots, decodeSlotValue, parseSlotKey, slotKey, type Slot, type SlotValue } from './slots.js';

/** A changed slot key: its new content, or undefined when the key was deleted. */
export interface ChangedSlot {
  readonly shardId: number;
  readonly writer: string;
  readonly slot: Slot | undefined;
}

export function readSlot(
  map: Y.Map<SlotValue>,
  key: string,
  shardId: number,
  writer: string,
  log: PlacementLog,
): Slot | undefined {
  const raw: unknown = map.get(key);
  if (raw === undefined) return undefined;
  const decoded = decodeSlotValue(raw, writer);
  if (decoded === null) {
    // Unreachable through applyUpdate (validated); kept so a bad value is ignored rather than trusted.
    log({ level: 'warn', message: `ignoring malformed placement slot ${JSON.stringify(key)}` });
    return undefined;
  }
  return { shardId, writer, ...decoded };
}

/** The slot keys `transaction` changed in top-level maps `typeNameOf` can name; other keys are skipped. */
export function changedSlots(
  transaction: Y.Transaction,
  typeNameOf: (type: object) => string | undefined,
  log: PlacementLog,
): Array<{ readonly typeName: string; readonly slots: ChangedSlot[] }> {
  const out: Array<{ readonly typeName: string; readonly slots: ChangedSlot[] }> = [];
  for (const [type, keys] of transaction.changed) {
    const typeName = typeNameOf(type);
    if (typeName === undefined || !(type instanceof Y.Map)) continue;
    const map = type as Y.Map<SlotValue>;
    const slots: ChangedSlot[] = [];
    for (const key of keys) {
      const parsed = key === null ? null : parseSlotKey(key);
      if (parsed === null || key === null) continue;
      slots.push({ ...parsed, slot: readSlot(map, key, parsed.shardId, parsed.writer, log) });
    }
    out.push({ typeName, slots });
  }
  return out;
}

/** Deletes the slot's key when it still holds exactly `slot` (a force removal of a refused value). */
export function deleteSlotIfSame(map: Y.Map<SlotValue>, slot: Slot): void {
  const key = slotKey(slot.shardId, slot.writer);
  const current = decodeSlotValue(map.get(key), slot.writer);
  if (current === null || compareSlots({ ...slot, ...current }, slot) !== 0) return;
  map.delete(key);
}
