// The placement store's options, their defaults and validation, and the shape of its stats.
import { MAX_NODE_LENGTH, MAX_UPDATE_STRUCTS, PlacementStoreError, describe, nameProblem } from './errors.js';
import { DEFAULT_MAX_DRIFT_MS } from './hlc.js';
import { silentLog } from './log.js';
/** History items after which a store compacts by itself (100,000), when they also outnumber live slots four to one. */
export const DEFAULT_COMPACT_AFTER_ITEMS = 100_000;
/**
 * Why not maxDriftMs: a node whose clock is an hour behind must still show, and override by successor,
 * what its peers write; from one replica, "my clock is behind" and "their clock is ahead" look the same.
 * A week tolerates any time-zone or daylight-saving mistake and still holds absurd clocks (years ahead).
 */
export const DEFAULT_MAX_AHEAD_MS = 7 * 24 * 3_600_000;
/** Validates options (throwing `invalid_option`) and fills in defaults. */
export function resolveStoreOptions(options) {
    if (typeof options !== 'object' || options === null) {
        throw new PlacementStoreError('invalid_option', `options must be an object, got ${describe(options)}`);
    }
    const problem = nameProblem(options.node, MAX_NODE_LENGTH);
    if (problem !== null)
        throw new PlacementStoreError('invalid_option', `node ${problem}`);
    const maxUpdateStructs = options.maxUpdateStructs ?? MAX_UPDATE_STRUCTS;
    if (!Number.isSafeInteger(maxUpdateStructs) || maxUpdateStructs < 1) {
        throw new PlacementStoreError('invalid_option', `maxUpdateStructs must be a positive integer, got ${describe(maxUpdateStructs)}`);
    }
    const compactAfterItems = options.compactAfterItems ?? DEFAULT_COMPACT_AFTER_ITEMS;
    if (compactAfterItems !== Infinity && (!Number.isSafeInteger(compactAfterItems) || compactAfterItems < 1)) {
        throw new PlacementStoreError('invalid_option', `compactAfterItems must be a positive integer or Infinity, got ${describe(compactAfterItems)}`);
    }
    const maxDriftMs = options.maxDriftMs ?? DEFAULT_MAX_DRIFT_MS;
    if (!Number.isFinite(maxDriftMs) || maxDriftMs < 0) {
        throw new PlacementStoreError('invalid_option', `maxDriftMs must be a finite number >= 0, got ${describe(maxDriftMs)}`);
    }
    const maxAheadMs = options.maxAheadMs ?? Math.max(DEFAULT_MAX_AHEAD_MS, maxDriftMs);
    if (!Number.isFinite(maxAheadMs) || maxAheadMs < maxDriftMs) {
        throw new PlacementStoreError('invalid_option', `maxAheadMs must be a finite number >= maxDriftMs (${maxDriftMs}), got ${describe(maxAheadMs)}`);
    }
    return {
        node: options.node,
        now: options.now ?? Date.now,
        maxDriftMs,
        maxAheadMs,
        log: safeLog(options.log ?? silentLog),
        maxUpdateStructs,
        compactAfterItems,
    };
}
/** A log sink that cannot throw into the store: a failing sink must not leave an update half-processed. */
function safeLog(log) {
    return (event) => {
        try {
            log(event);
        }
        catch {
            // Nowhere left to report it.
        }
    };
}
//# sourceMappingURL=store-options.js.map