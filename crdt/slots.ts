// The per-writer slot encoding, kept in one place: map key `shardId + "\u0000" + writer`, map value
// `[target | null, wallMs, counter]`. The slot's writer is also its timestamp's node, so it is not stored twice.
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

const SEPARATOR = '\u0000';
const CANONICAL_SHARD = /^(?:0|[1-9][0-9]{0,15})$/;

/** What is stored under a slot key; `target: null` is a tombstone (a removal with its own timestamp). */
export type SlotValue = readonly [target: string | null, wallMs: number, counter: number];

/** One decoded slot. */
export interface Slot {
  readonly shardId: number;
  readonly writer: string;
  readonly target: string | null;
  readonly hlc: Hlc;
}

/**
 * Orders slots of one shard: by hlc, and for the same hlc (one node writing twice at one instant, possible
 * only across a restart with a clock set back) by target, a tombstone lowest, so every replica picks the same.
 */
export function compareSlots(a: Slot, b: Slot): number {
  const byHlc = compareHlc(a.hlc, b.hlc);
  if (byHlc !== 0 || a.target === b.target) return byHlc;
  if (a.target === null || b.target === null) return a.target === null ? -1 : 1;
  return a.target < b.target ? -1 : 1;
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

export function encodeSlotValue(target: string | null, hlc: Hlc): SlotValue {
  return [target, hlc.wallMs, hlc.counter];
}

/** The slot's content with its timestamp (node = writer), or null when `value` is not a well-formed slot value. */
export function decodeSlotValue(
  value: unknown,
  writer: string,
): { readonly target: string | null; readonly hlc: Hlc } | null {
  if (!isSlotValue(value)) return null;
  return { target: value[0], hlc: Object.freeze({ wallMs: value[1], counter: value[2], node: writer }) };
}

export function isSlotValue(value: unknown): value is SlotValue {
  if (!Array.isArray(value) || value.length !== 3) return false;
  const [target, wallMs, counter] = value as unknown[];
  if (target !== null && nameProblem(target, MAX_TARGET_LENGTH) !== null) return false;
  if (typeof wallMs !== 'number' || !Number.isSafeInteger(wallMs) || wallMs < 0) return false;
  return typeof counter === 'number' && Number.isInteger(counter) && counter >= 0 && counter <= MAX_HLC_COUNTER;
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
