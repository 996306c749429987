// The per-writer slot encoding, kept in one place: map key `shardId + "\u0000" + writer`, map value
// `[target | null, wallMs, counter, meta?]`. The slot's writer is also its timestamp's node, so it is not stored
// twice. `meta` (slot-meta.ts) came with protocol version 3; the 3-element values of version 2 still read.
import {
  MAX_HLC_COUNTER,
  MAX_NODE_LENGTH,
  MAX_TARGET_LENGTH,
  MAX_TYPE_NAME_LENGTH,
  PlacementStoreError,
  describe,
  nameProblem,
} from './errors.js';
import { compareHlc, type Hlc } from './hlc.js';
import { assertMeta, canonicalMeta, compareMeta, metaProblem, type SlotMeta } from './slot-meta.js';

const SEPARATOR = '\u0000';
const CANONICAL_SHARD = /^(?:0|[1-9][0-9]{0,15})$/;

/**
 * What is stored under a slot key; `target: null` is a tombstone (a removal with its own timestamp) and
 * never carries meta.
 */
export type SlotValue =
  | readonly [target: string | null, wallMs: number, counter: number]
  | readonly [target: string, wallMs: number, counter: number, meta: SlotMeta]
  | readonly [target: string | null, wallMs: number, counter: number, meta: SlotMeta | null, over: OverValue];

/** An override mark as stored: the timestamp of the held value a write was made over (see Slot.over). */
export type OverValue = readonly [wallMs: number, counter: number, node: string];

/** One decoded slot. */
export interface Slot {
  readonly shardId: number;
  readonly writer: string;
  readonly target: string | null;
  readonly hlc: Hlc;
  /** Present only with a target, and only when the writer gave one. */
  readonly meta?: SlotMeta;
  /**
   * Set when the writer held a value of this shard too far ahead of its clock (admission.ts) and wrote over
   * it: the greatest such timestamp, carried on by later writes of the shard. The slot then ranks at this
   * timestamp, just above any slot whose own timestamp it is, so that value never overrides the write on
   * any replica, whatever the clocks do later (compareSlots).
   */
  readonly over?: Hlc;
}

/**
 * Orders slots of one shard: by rank (the `over` mark when it is greater than the hlc, else the hlc), a slot
 * ranked by its mark above one ranked by its own hlc, then by hlc, and for the same hlc (one node writing
 * twice at one instant, possible only across a restart with a clock set back) by target, a tombstone lowest,
 * then by meta, so every replica picks the same. Without marks this is the plain hlc order.
 */
export function compareSlots(a: Slot, b: Slot): number {
  const aMarked = marked(a);
  const bMarked = marked(b);
  if (aMarked || bMarked) {
    const byRank = compareHlc(rankOf(a), rankOf(b));
    if (byRank !== 0) return byRank;
    if (aMarked !== bMarked) return aMarked ? 1 : -1;
  }
  const byHlc = compareHlc(a.hlc, b.hlc);
  if (byHlc !== 0) return byHlc;
  if (a.target !== b.target) {
    if (a.target === null || b.target === null) return a.target === null ? -1 : 1;
    return a.target < b.target ? -1 : 1;
  }
  return compareMeta(a.meta, b.meta);
}

/** Whether the slot ranks by its `over` mark (the mark is greater than its own timestamp). */
function marked(slot: Slot): boolean {
  return slot.over !== undefined && compareHlc(slot.over, slot.hlc) > 0;
}

/** The timestamp a slot ranks at: its `over` mark when greater than its hlc, else its hlc. */
export function rankOf(slot: Pick<Slot, 'hlc' | 'over'>): Hlc {
  return slot.over !== undefined && compareHlc(slot.over, slot.hlc) > 0 ? slot.over : slot.hlc;
}

export function slotKey(shardId: number, writer: string): string {
  return `${shardId}${SEPARATOR}${writer}`;
}

/** The shard and writer of a slot key, or null when the key is not one this store would write. */
export function parseSlotKey(key: string): { readonly shardId: number; readonly writer: string } | null {
  const at = key.indexOf(SEPARATOR);
  if (at <= 0) return null;
  const digits = key.slice(0, at);
  const writer = key.slice(at + 1);
  if (!CANONICAL_SHARD.test(digits)) return null;
  const shardId = Number(digits);
  if (!Number.isSafeInteger(shardId)) return null;
  if (nameProblem(writer, MAX_NODE_LENGTH) !== null) return null;
  return { shardId, writer };
}

/** `meta` must have passed assertMeta; it is stored canonical (keys sorted). A tombstone drops it. */
export function encodeSlotValue(target: string | null, hlc: Hlc, meta?: SlotMeta, over?: Hlc): SlotValue {
  const kept = target === null || meta === undefined ? undefined : canonicalMeta(meta);
  if (over !== undefined)
    return [target, hlc.wallMs, hlc.counter, kept ?? null, [over.wallMs, over.counter, over.node]];
  if (target === null || kept === undefined) return [target, hlc.wallMs, hlc.counter];
  return [target, hlc.wallMs, hlc.counter, kept];
}

/** The slot's content with its timestamp (node = writer), or null when `value` is not a well-formed slot value. */
export function decodeSlotValue(
  value: unknown,
  writer: string,
): { readonly target: string | null; readonly hlc: Hlc; readonly meta?: SlotMeta; readonly over?: Hlc } | null {
  if (!isSlotValue(value)) return null;
  const hlc = Object.freeze({ wallMs: value[1], counter: value[2], node: writer });
  const meta = value.length >= 4 && value[3] !== null && value[3] !== undefined ? canonicalMeta(value[3]) : undefined;
  const over =
    value.length === 5 ? Object.freeze({ wallMs: value[4][0], counter: value[4][1], node: value[4][2] }) : undefined;
  return { target: value[0], hlc, ...(meta === undefined ? {} : { meta }), ...(over === undefined ? {} : { over }) };
}

export function isSlotValue(value: unknown): value is SlotValue {
  if (!Array.isArray(value) || value.length < 3 || value.length > 5) return false;
  const [target, wallMs, counter, meta, over] = value as unknown[];
  if (target !== null && nameProblem(target, MAX_TARGET_LENGTH) !== null) return false;
  if (value.length === 4 && (target === null || metaProblem(meta) !== null)) return false;
  if (value.length === 5 && meta !== null && (target === null || metaProblem(meta) !== null)) return false;
  if (value.length === 5 && !isOverValue(over)) return false;
  return isStamp(wallMs, counter);
}

function isOverValue(value: unknown): value is OverValue {
  if (!Array.isArray(value) || value.length !== 3) return false;
  const [wallMs, counter, node] = value as unknown[];
  return isStamp(wallMs, counter) && nameProblem(node, MAX_NODE_LENGTH) === null;
}

function isStamp(wallMs: unknown, counter: unknown): boolean {
  if (typeof wallMs !== 'number' || !Number.isSafeInteger(wallMs) || wallMs < 0) return false;
  return typeof counter === 'number' && Number.isInteger(counter) && counter >= 0 && counter <= MAX_HLC_COUNTER;
}

/** One write of a target: shard, target and canonical meta (undefined when none). */
export type SlotWrite = readonly [shardId: number, target: string, meta: SlotMeta | undefined];

/**
 * Validates `{ shardId, target, meta? }` entries, all before any is written, and returns them as writes
 * with canonical meta. Throws `invalid_option`, `invalid_shard_id` or `invalid_target`.
 */
export function checkWrites(entries: unknown): SlotWrite[] {
  if (!Array.isArray(entries))
    throw new PlacementStoreError('invalid_option', `entries must be an array, got ${describe(entries)}`);
  return entries.map((entry: unknown): SlotWrite => {
    if (typeof entry !== 'object' || entry === null) {
      throw new PlacementStoreError(
        'invalid_option',
        `each entry must be { shardId, target, meta? }, got ${describe(entry)}`,
      );
    }
    const { shardId, target, meta } = entry as { shardId?: unknown; target?: unknown; meta?: unknown };
    assertShardId(shardId);
    assertTarget(target);
    if (meta === undefined) return [shardId, target, undefined];
    assertMeta(meta);
    return [shardId, target, canonicalMeta(meta)];
  });
}

export function assertShardId(shardId: unknown): asserts shardId is number {
  if (typeof shardId !== 'number' || !Number.isSafeInteger(shardId) || shardId < 0) {
    throw new PlacementStoreError(
      'invalid_shard_id',
      `shardId must be a non-negative safe integer, got ${describe(shardId)}`,
    );
  }
}

export function assertTarget(target: unknown): asserts target is string {
  const problem = nameProblem(target, MAX_TARGET_LENGTH);
  if (problem !== null) throw new PlacementStoreError('invalid_target', `target ${problem}`);
}

export function assertTypeName(typeName: unknown): asserts typeName is string {
  const problem = typeNameProblem(typeName);
  if (problem !== null) throw new PlacementStoreError('invalid_type_name', `typeName ${problem}`);
}

export function typeNameProblem(typeName: unknown): string | null {
  return nameProblem(typeName, MAX_TYPE_NAME_LENGTH);
}
