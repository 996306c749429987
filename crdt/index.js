// Public surface of the replicated placement store: HLC, the LWW placement map on Yjs, and its replicator.
export { compareHlc, HybridLogicalClock, successor, DEFAULT_MAX_DRIFT_MS } from './hlc.js';
export { PlacementStoreError, MAX_TARGET_LENGTH, MAX_TYPE_NAME_LENGTH, MAX_NODE_LENGTH, MAX_HLC_COUNTER, MAX_HLC_WALL_MS, MAX_UPDATE_STRUCTS, describe, } from './errors.js';
export { MAX_META_FIELDS, MAX_META_STRING_LENGTH, metaProblem } from './slot-meta.js';
export { PlacementStore, DEFAULT_COMPACT_AFTER_ITEMS, DEFAULT_MAX_AHEAD_MS } from './store.js';
export { EMPTY_STATE_VECTOR } from './wire.js';
export { encodeSyncFrame, decodeSyncFrame, DEFAULT_MAX_FRAME_BYTES } from './sync-frame.js';
export { PlacementReplicator, DEFAULT_ANTI_ENTROPY_INTERVAL_MS, DEFAULT_RELAY_FANOUT } from './replicator.js';
export { DurablePlacementStore, whenDurable, DEFAULT_SNAPSHOT_AFTER_RECORDS, DEFAULT_SNAPSHOT_AFTER_LOG_BYTES } from './persistence/durable-store.js';
export { PersistenceError, DEFAULT_MAX_RECORD_BYTES } from './persistence/persistence.js';
export { memoryPersistence, createMemoryVolume } from './persistence/memory-persistence.js';
export { openLmdbPersistence } from './persistence/lmdb-persistence.js';
//# sourceMappingURL=index.js.map