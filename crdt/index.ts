// Public surface of the replicated placement store: HLC, the LWW placement map on Yjs, and its replicator.
export { compareHlc, HybridLogicalClock, successor, DEFAULT_MAX_DRIFT_MS } from './hlc.js';
export type { Hlc, HybridLogicalClockOptions } from './hlc.js';
export {
  CodedError,
  PlacementStoreError,
  MAX_TARGET_LENGTH,
  MAX_TYPE_NAME_LENGTH,
  MAX_NODE_LENGTH,
  MAX_HLC_COUNTER,
  MAX_HLC_WALL_MS,
  MAX_UPDATE_STRUCTS,
  describe,
} from './errors.js';
export type { PlacementStoreErrorCode } from './errors.js';
export type { PlacementLog, PlacementLogEvent } from './log.js';
export type { Placement, PlacementSnapshot } from './snapshot.js';
export { MAX_META_FIELDS, MAX_META_STRING_LENGTH, metaProblem, type SlotMeta } from './slot-meta.js';
export {
  PlacementStore,
  DEFAULT_COMPACT_AFTER_ITEMS,
  DEFAULT_MAX_AHEAD_MS,
  DEFAULT_MAX_UPDATE_SLOTS,
} from './store.js';
export type { SlotCheck } from './update-guard.js';
export { EMPTY_STATE_VECTOR } from './wire.js';
export { MAX_DIGEST_BYTES } from './wire-digest.js';
export type {
  PlacementStoreOptions,
  PlacementStoreStats,
  RemoveOptions,
  UpdateListener,
  ChangeListener,
} from './store.js';
export { encodeSyncFrame, decodeSyncFrame, DEFAULT_MAX_FRAME_BYTES } from './sync-frame.js';
export type { SyncFrame } from './sync-frame.js';
export { PlacementReplicator } from './replicator.js';
export { DEFAULT_ANTI_ENTROPY_INTERVAL_MS, DEFAULT_RELAY_FANOUT } from './replicator-options.js';
export type {
  PlacementByteLink,
  PlacementFrameLink,
  PlacementLink,
  PlacementPeerStats,
  PlacementReplicatorOptions,
  PlacementReplicatorStats,
} from './replicator-options.js';
export {
  DurablePlacementStore,
  whenDurable,
  DEFAULT_SNAPSHOT_AFTER_RECORDS,
  DEFAULT_SNAPSHOT_AFTER_LOG_BYTES,
} from './persistence/durable-store.js';
export type { DurablePlacementStoreOptions } from './persistence/durable-store.js';
export type { PlacementDurability, PlacementStorageHealth, PersistenceStats } from './durability.js';
export { PersistenceError, DEFAULT_MAX_RECORD_BYTES } from './persistence/persistence.js';
export type {
  PlacementPersistence,
  PersistedState,
  PersistenceOptions,
  PersistenceErrorCode,
} from './persistence/persistence.js';
export { memoryPersistence, createMemoryVolume } from './persistence/memory-persistence.js';
export type { MemoryVolume, MemoryPersistenceOptions } from './persistence/memory-persistence.js';
export { DURABLE_LMDB_OPTIONS, openLmdbPersistence } from './persistence/lmdb-persistence.js';
export { lockHolder } from './persistence/persistence-lock.js';
