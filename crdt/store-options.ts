// The placement store's options, their defaults and validation, and the shape of its stats.
import { MAX_NODE_LENGTH, MAX_UPDATE_STRUCTS, PlacementStoreError, describe, nameProblem } from './errors.js';
import { DEFAULT_MAX_DRIFT_MS } from './hlc.js';
import { silentLog, type PlacementLog } from './log.js';
import type { SlotCheck } from './update-guard.js';

/** Options of a PlacementStore; only `node` is required. */
export interface PlacementStoreOptions {
  /** This node's stable name: the writer of every slot this store writes. */
  readonly node: string;
  readonly now?: () => number;
  /** A remote timestamp further ahead of the local wall clock than this does not move the clock. Default 60_000. */
  readonly maxDriftMs?: number;
  /**
   * A remote value further ahead of the local wall clock than this is held (not shown, not a base for a
   * successor) until the clock is within this distance of it; see admission.ts. Default
   * DEFAULT_MAX_AHEAD_MS (7 days). Must be at least maxDriftMs.
   */
  readonly maxAheadMs?: number;
  readonly log?: PlacementLog;
  /** Remote updates with more structs (or base slots) are rejected. Default MAX_UPDATE_STRUCTS (2,000,000). */
  readonly maxUpdateStructs?: number;
  /**
   * Compacts automatically (see `compact()`) once the current document holds more than this many items
   * and more than four times as many items as live slots. Default DEFAULT_COMPACT_AFTER_ITEMS (100,000);
   * `Infinity` leaves compaction to explicit `compact()` calls.
   */
  readonly compactAfterItems?: number;
  /**
   * Remote updates that bring more slots at once (keys new to the document plus base slots) are rejected
   * (`too_many_slots`). Default DEFAULT_MAX_UPDATE_SLOTS (200,000): a full sync carries one base slot per
   * shard and writer-slot, so raise it for clusters with more shards than that.
   */
  readonly maxUpdateSlots?: number;
  /**
   * Says why a remote slot may not exist (say, a shard id beyond its type's shard count), or null; an
   * update with such a slot is rejected (`shard_out_of_range`). The store knows nothing of shard counts:
   * whoever does passes this (or sets it later, `setSlotCheck`).
   */
  readonly slotCheck?: SlotCheck;
}

/** History items after which a store compacts by itself (100,000), when they also outnumber live slots four to one. */
export const DEFAULT_COMPACT_AFTER_ITEMS = 100_000;
/** New slots (document keys plus base slots) one peer update may add at most (200,000); over it, refused. */
export const DEFAULT_MAX_UPDATE_SLOTS = 200_000;
/**
 * Why not maxDriftMs: a node whose clock is an hour behind must still show, and override by successor,
 * what its peers write; from one replica, "my clock is behind" and "their clock is ahead" look the same.
 * A week tolerates any time-zone or daylight-saving mistake and still holds absurd clocks (years ahead).
 */
export const DEFAULT_MAX_AHEAD_MS = 7 * 24 * 3_600_000;

/** A store's size and its counts of refused and held values, for health and metrics. */
export interface PlacementStoreStats {
  /** Live slots (map keys) over all types; never more than writers x shards. */
  readonly slots: number;
  /** Own slots deleted because a strictly greater slot for the same shard exists. */
  readonly prunedSlots: number;
  /** Own writes re-asserted after an earlier incarnation's concurrent write to the same slot hid them. */
  readonly repairedSlots: number;
  /** Remote timestamps too far ahead (maxDriftMs) to move the local clock (cumulative). */
  readonly driftRejected: number;
  /** Remote updates rejected as malformed (nothing of them was applied). */
  readonly rejectedUpdates: number;
  /** Remote slot values that did not count when they arrived, by reason (cumulative). */
  readonly rejectedValues: { readonly outOfRange: number; readonly aheadOfClock: number };
  /** Values held now, waiting for the local clock to come within maxDriftMs of them. */
  readonly heldValues: number;
  /** Out-of-range values in the document now: never counted; `remove(..., { force: true })` deletes them. */
  readonly quarantinedValues: number;
  /** Forced removals this replica made. */
  readonly forcedRemovals: number;
  /**
   * Whether Yjs holds updates it cannot integrate yet because an earlier update of the same writer is
   * missing here. Anti-entropy normally fills the gap within a round; if it stays true, replication is stuck.
   */
  readonly awaitingMissingUpdates: boolean;
  /** Shard winners recomputed by snapshot refreshes: refresh work is proportional to this. */
  readonly recomputedShards: number;
  /** The current document's generation: how many compactions this replica's history has been through. */
  readonly generation: number;
  /** Shards whose compacted winner is held in the base. */
  readonly baseSlots: number;
  /** Items (writes and prunes, live or deleted) in the current document: what a full sync carries. */
  readonly documentItems: number;
  /** Compactions this replica started itself. */
  readonly compactions: number;
  /** Document updates of a generation this replica no longer holds, ignored (their writers re-send them folded). */
  readonly staleUpdates: number;
  /** The generation of the document kept from before the last compaction, or null once it was released. */
  readonly previousGeneration: number | null;
}

export interface ResolvedStoreOptions {
  readonly node: string;
  readonly now: () => number;
  readonly maxDriftMs: number;
  readonly maxAheadMs: number;
  readonly log: PlacementLog;
  readonly maxUpdateStructs: number;
  readonly compactAfterItems: number;
  readonly maxUpdateSlots: number;
  readonly slotCheck: SlotCheck | undefined;
}

/** Validates options (throwing `invalid_option`) and fills in defaults. */
export function resolveStoreOptions(options: PlacementStoreOptions): ResolvedStoreOptions {
  if (typeof options !== 'object' || options === null) {
    throw new PlacementStoreError('invalid_option', `options must be an object, got ${describe(options)}`);
  }
  const problem = nameProblem(options.node, MAX_NODE_LENGTH);
  if (problem !== null) throw new PlacementStoreError('invalid_option', `node ${problem}`);
  const maxUpdateStructs = options.maxUpdateStructs ?? MAX_UPDATE_STRUCTS;
  if (!Number.isSafeInteger(maxUpdateStructs) || maxUpdateStructs < 1) {
    throw new PlacementStoreError(
      'invalid_option',
      `maxUpdateStructs must be a positive integer, got ${describe(maxUpdateStructs)}`,
    );
  }
  const compactAfterItems = options.compactAfterItems ?? DEFAULT_COMPACT_AFTER_ITEMS;
  if (compactAfterItems !== Infinity && (!Number.isSafeInteger(compactAfterItems) || compactAfterItems < 1)) {
    throw new PlacementStoreError(
      'invalid_option',
      `compactAfterItems must be a positive integer or Infinity, got ${describe(compactAfterItems)}`,
    );
  }
  const maxUpdateSlots = options.maxUpdateSlots ?? DEFAULT_MAX_UPDATE_SLOTS;
  if (!Number.isSafeInteger(maxUpdateSlots) || maxUpdateSlots < 1) {
    throw new PlacementStoreError(
      'invalid_option',
      `maxUpdateSlots must be a positive integer, got ${describe(maxUpdateSlots)}`,
    );
  }
  if (options.slotCheck !== undefined && typeof options.slotCheck !== 'function') {
    throw new PlacementStoreError('invalid_option', `slotCheck must be a function, got ${describe(options.slotCheck)}`);
  }
  const maxDriftMs = options.maxDriftMs ?? DEFAULT_MAX_DRIFT_MS;
  if (!Number.isFinite(maxDriftMs) || maxDriftMs < 0) {
    throw new PlacementStoreError(
      'invalid_option',
      `maxDriftMs must be a finite number >= 0, got ${describe(maxDriftMs)}`,
    );
  }
  const maxAheadMs = options.maxAheadMs ?? Math.max(DEFAULT_MAX_AHEAD_MS, maxDriftMs);
  if (!Number.isFinite(maxAheadMs) || maxAheadMs < maxDriftMs) {
    throw new PlacementStoreError(
      'invalid_option',
      `maxAheadMs must be a finite number >= maxDriftMs (${maxDriftMs}), got ${describe(maxAheadMs)}`,
    );
  }
  return {
    node: options.node,
    now: options.now ?? Date.now,
    maxDriftMs,
    maxAheadMs,
    log: safeLog(options.log ?? silentLog),
    maxUpdateStructs,
    compactAfterItems,
    maxUpdateSlots,
    slotCheck: options.slotCheck,
  };
}

/** A log sink that cannot throw into the store: a failing sink must not leave an update half-processed. */
function safeLog(log: PlacementLog): PlacementLog {
  return (event) => {
    try {
      log(event);
    } catch {
      // Nowhere left to report it.
    }
  };
}

/** Options of `PlacementStore.remove`. */
export interface RemoveOptions {
  /**
   * Also deletes, from the document, every value of the shard this replica refuses (held for being ahead
   * of its clock, or out of range). The deletion is a Yjs deletion of those exact items, so it reaches
   * every replica; a value the writer sets later is a new item and is not affected.
   */
  readonly force?: boolean;
}
