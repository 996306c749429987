// What explain and dry runs answer, and the messages that carry them between any node and the coordinator:
// the requests (ExplainShard, DryRunPlacements, DryRunRebalance) and their answers (ShardExplained,
// DryRunAnswer). Answers come from the network, so every field is checked and every list and string bounded.
import type { RawMessage } from '../../cluster/transport/wire-message.js';
import {
  PLACEMENT_MODES,
  MAX_BY_LENGTH,
  MAX_REASON_LENGTH,
  type PlacementMode,
} from '../placements/placement-options.js';
import type { PinRecord } from '../placements/placement-record.js';
import { MAX_PLACEMENT_TARGET_LENGTH } from '../placements/placement-target.js';
import type { RequestMessage } from './request-message.js';
import { MAX_SHARD_ID, isAddress, isRequestId, isShardId } from './wire-values.js';

/** Why a shard is where it is (or nowhere). */
export type ExplainDecision = 'placement' | 'placement-unavailable' | 'waiting' | 'fallback' | 'unallocated';
export const EXPLAIN_DECISIONS: ReadonlyArray<ExplainDecision> = [
  'placement',
  'placement-unavailable',
  'waiting',
  'fallback',
  'unallocated',
];

/** One region as explain lists it. */
export interface ExplainNode {
  readonly address: string;
  /** How many shards of the type it hosts. */
  readonly shards: number;
  readonly reachable: boolean;
  /** Its member status (`up`, `leaving`, ...), or `removed` once the membership no longer lists it. */
  readonly status: string;
  readonly cordoned: boolean;
  /** Whether the shard's pin allows this node; null when the shard has no pin in force. */
  readonly matches: boolean | null;
}

/** The answer of `GET .../explain/{shardId}`: where the shard is and why, in the coordinator's words. */
export interface ShardExplanation {
  readonly shardId: number;
  /** The address hosting it, or null. */
  readonly home: string | null;
  readonly handingOff: boolean;
  /** The pin as `placements ls` lists it, or null. */
  readonly placement: PinRecord | null;
  readonly decision: ExplainDecision;
  /** One plain sentence saying why. */
  readonly message: string;
  readonly nodes: ReadonlyArray<ExplainNode>;
  /**
   * What the coordinator did with the shard lately, oldest first (at most MAX_HISTORY entries): its allocations,
   * starts and hand-offs with their cause. Empty from a coordinator of a release before 0.3.0, and for a shard
   * this coordinator has not touched since it took over.
   */
  readonly history: ReadonlyArray<ShardHistoryEntry>;
}

/** One thing the coordinator did with a shard. */
export interface ShardHistoryEntry {
  /** When, in epoch milliseconds (the coordinator's clock). */
  readonly atMs: number;
  /** What, in a few words: `allocated to B`, `handed off from B (drain)`. */
  readonly what: string;
}

/** History entries one explanation carries at most, and the longest entry text accepted. */
export const MAX_HISTORY = 16;
export const MAX_HISTORY_TEXT = 512;

/** One hand-off a dry run found: `to` is null when the shard would wait without a home (a require pin). */
export interface DryRunMove {
  readonly shardId: number;
  readonly from: string;
  readonly to: string | null;
}

/** A warning of a dry run: a pin that could not be honoured, or the strategy failing. */
export interface DryRunWarning {
  /** Null for a warning about no one shard (the strategy failed). */
  readonly shardId: number | null;
  /** The pin's target, when the warning is about one. */
  readonly target?: string;
  readonly message: string;
}

/** What the coordinator would start right now, and what it would warn about. */
export interface DryRunMoves {
  readonly moves: ReadonlyArray<DryRunMove>;
  readonly warnings: ReadonlyArray<DryRunWarning>;
}

/** A pin as a placements dry run proposes it: validated by the controller, the expiry fixed in epoch ms. */
export interface ProposedPin {
  readonly shardId: number;
  /** Canonical target. */
  readonly target: string;
  readonly mode: PlacementMode;
  readonly expiresAt: number | null;
}

export type InsightMessage =
  /** Requester -> C. Why is this shard where it is? */
  | RequestMessage<'ExplainShard', { shardId: number }>
  /** C -> requester. Null when the shard id is out of range for the type. */
  | RequestMessage<'ShardExplained', { explanation: ShardExplanation | null }>
  /** Requester -> C. Which shards would move if these pins were written now? Nothing is written. */
  | RequestMessage<'DryRunPlacements', { pins: ReadonlyArray<ProposedPin> }>
  /** Requester -> C. Which shards would move, and where, if these were handed off now? Nothing is handed off. */
  | RequestMessage<'DryRunRebalance', { shardIds: ReadonlyArray<number> }>
  /** C -> requester. The answer to either dry run. */
  | RequestMessage<'DryRunAnswer', DryRunMoves>;

/** The insight messages a coordinator answers (the rest are its answers). */
export type InsightRequest = Extract<
  InsightMessage,
  { readonly type: 'ExplainShard' | 'DryRunPlacements' | 'DryRunRebalance' }
>;

/** Longest explanation sentence or warning accepted. */
export const MAX_INSIGHT_TEXT = 4096;
const MAX_LIST = MAX_SHARD_ID + 1;
const MAX_NODES = 10_000;
const MAX_STATUS_LENGTH = 32;
const MAX_NODE_KEY_LENGTH = 512;

/** Validates one of the messages above (typeName already checked); undefined when any field is wrong. */
export function parseInsightMessage(raw: RawMessage, typeName: string): InsightMessage | undefined {
  const requestId = raw['requestId'];
  if (!isRequestId(requestId)) return undefined;
  switch (raw.type) {
    case 'ExplainShard': {
      const shardId = raw['shardId'];
      return isShardId(shardId) ? { type: raw.type, typeName, requestId, shardId } : undefined;
    }
    case 'ShardExplained': {
      const value = raw['explanation'];
      const explanation = value === null ? null : parseExplanation(value);
      return explanation === undefined ? undefined : { type: raw.type, typeName, requestId, explanation };
    }
    case 'DryRunPlacements': {
      const pins = list(raw['pins'], MAX_LIST, parseProposedPin);
      return pins === undefined ? undefined : { type: raw.type, typeName, requestId, pins };
    }
    case 'DryRunRebalance': {
      const shardIds = list(raw['shardIds'], MAX_LIST, (item) => (isShardId(item) ? item : undefined));
      return shardIds === undefined ? undefined : { type: raw.type, typeName, requestId, shardIds };
    }
    case 'DryRunAnswer': {
      const moves = list(raw['moves'], MAX_LIST, parseMove);
      const warnings = list(raw['warnings'], MAX_LIST, parseWarning);
      return moves === undefined || warnings === undefined
        ? undefined
        : { type: raw.type, typeName, requestId, moves, warnings };
    }
    default:
      return undefined;
  }
}

function list<T>(value: unknown, max: number, item: (value: unknown) => T | undefined): T[] | undefined {
  if (!Array.isArray(value) || value.length > max) return undefined;
  const out: T[] = [];
  for (const element of value) {
    const parsed = item(element);
    if (parsed === undefined) return undefined;
    out.push(parsed);
  }
  return out;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function text(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length <= max;
}

function orNull<T>(value: unknown, check: (value: unknown) => value is T): T | null | undefined {
  if (value === null) return null;
  return check(value) ? value : undefined;
}

function isMode(value: unknown): value is PlacementMode {
  return typeof value === 'string' && (PLACEMENT_MODES as ReadonlyArray<string>).includes(value);
}

function isEpochMs(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function parseProposedPin(value: unknown): ProposedPin | undefined {
  const raw = record(value);
  if (raw === undefined) return undefined;
  const { shardId, target, mode } = raw;
  const expiresAt = orNull(raw['expiresAt'], isEpochMs);
  if (!isShardId(shardId) || !text(target, MAX_PLACEMENT_TARGET_LENGTH) || !isMode(mode) || expiresAt === undefined)
    return undefined;
  return { shardId, target, mode, expiresAt };
}

function parseMove(value: unknown): DryRunMove | undefined {
  const raw = record(value);
  if (raw === undefined) return undefined;
  const { shardId, from } = raw;
  const to = orNull(raw['to'], isAddress);
  return isShardId(shardId) && isAddress(from) && to !== undefined ? { shardId, from, to } : undefined;
}

function parseWarning(value: unknown): DryRunWarning | undefined {
  const raw = record(value);
  if (raw === undefined) return undefined;
  const { target, message } = raw;
  const shardId = orNull(raw['shardId'], isShardId);
  if (shardId === undefined || !text(message, MAX_INSIGHT_TEXT)) return undefined;
  if (target === undefined || target === null) return { shardId, message };
  return text(target, MAX_PLACEMENT_TARGET_LENGTH) ? { shardId, target, message } : undefined;
}

function parseExplanation(value: unknown): ShardExplanation | undefined {
  const raw = record(value);
  if (raw === undefined) return undefined;
  const { shardId, handingOff, decision, message } = raw;
  const home = orNull(raw['home'], isAddress);
  const placement = raw['placement'] === null ? null : parsePlacement(raw['placement']);
  const nodes = list(raw['nodes'], MAX_NODES, parseNode);
  if (
    !isShardId(shardId) ||
    home === undefined ||
    typeof handingOff !== 'boolean' ||
    placement === undefined ||
    nodes === undefined
  )
    return undefined;
  if (!(EXPLAIN_DECISIONS as ReadonlyArray<unknown>).includes(decision) || !text(message, MAX_INSIGHT_TEXT))
    return undefined;
  // Absent from a coordinator before 0.3.0: an empty history, not a malformed answer.
  const history = raw['history'] === undefined ? [] : list(raw['history'], MAX_HISTORY, parseHistoryEntry);
  if (history === undefined) return undefined;
  return { shardId, home, handingOff, placement, decision: decision as ExplainDecision, message, nodes, history };
}

function parseHistoryEntry(value: unknown): ShardHistoryEntry | undefined {
  const raw = record(value);
  if (raw === undefined) return undefined;
  const { atMs, what } = raw;
  return isEpochMs(atMs) && text(what, MAX_HISTORY_TEXT) ? { atMs, what } : undefined;
}

function parseNode(value: unknown): ExplainNode | undefined {
  const raw = record(value);
  if (raw === undefined) return undefined;
  const { address, shards, reachable, status, cordoned } = raw;
  const matches = orNull(raw['matches'], (v): v is boolean => typeof v === 'boolean');
  if (!isAddress(address) || !isEpochMs(shards) || shards > MAX_LIST || typeof reachable !== 'boolean')
    return undefined;
  if (!text(status, MAX_STATUS_LENGTH) || typeof cordoned !== 'boolean' || matches === undefined) return undefined;
  return { address, shards, reachable, status, cordoned, matches };
}

function parsePlacement(value: unknown): PinRecord | undefined {
  const raw = record(value);
  if (raw === undefined) return undefined;
  const { shardId, target, mode, writer } = raw;
  const expiresAt = orNull(raw['expiresAt'], (v): v is string => text(v, 64));
  const reason = orNull(raw['reason'], (v): v is string => text(v, MAX_REASON_LENGTH));
  const by = orNull(raw['by'], (v): v is string => text(v, MAX_BY_LENGTH));
  const hlc = record(raw['hlc']);
  if (
    !isShardId(shardId) ||
    !text(target, MAX_PLACEMENT_TARGET_LENGTH) ||
    !isMode(mode) ||
    !text(writer, MAX_NODE_KEY_LENGTH)
  )
    return undefined;
  if (expiresAt === undefined || reason === undefined || by === undefined || hlc === undefined) return undefined;
  const { wallMs, counter, node } = hlc;
  if (!isEpochMs(wallMs) || !isEpochMs(counter) || !text(node, MAX_NODE_KEY_LENGTH)) return undefined;
  return { shardId, target, mode, expiresAt, reason, by, writer, hlc: { wallMs, counter, node } };
}
