// Typed errors of the sharding runtime: every rejection of bad input carries a stable `code`
// that the management API maps to its `{ error, message }` body. The base every typed error shares
// (CodedError) lives in crdt/errors.ts, which imports nothing, so the store needs no sharding concept.
import { CodedError } from '../crdt/errors.js';

/** The one base of every typed error (crdt/errors.ts), re-exported so the runtime's layers take it from here. */
export { CodedError };

/** Machine-readable reason of an ActorTsError; the management API reports the same codes. */
export type ErrorCode =
  | 'invalid_address'
  | 'invalid_argument'
  | 'unknown_type'
  | 'invalid_shard'
  | 'not_found'
  | 'timeout'
  /** A coordinator request found the coordinator's node unreachable: failed at once instead of timing out. */
  | 'coordinator_unreachable'
  | 'not_running'
  | 'frame_too_large'
  | 'malformed_message'
  /** An entity's receive threw or rejected while answering an ask. */
  | 'entity_failed'
  /** A region's buffer for shards without a known home was full; the message was dropped. */
  | 'buffer_overflow'
  /** A manual rebalance named shards that have no home yet, so there was nothing to move. */
  | 'not_allocated'
  /** A placement target that is neither an address nor a selector (PlacementRuleError). */
  | 'invalid_target'
  /** A placement's mode, expiry, reason or author is not acceptable (PlacementRuleError). */
  | 'invalid_placement'
  /** No current member matches a placement's target and the write did not allow that (PlacementRuleError). */
  | 'unknown_target'
  /** A durable entity's store could not commit or load (down, unreachable, disk full): nothing was acknowledged. */
  | 'entity_store_unavailable'
  /** A later host claimed the durable entity's shard in the store: this host may commit nothing more for it. */
  | 'entity_fenced'
  /** A durable entity's stored row does not decode: the entity is not started (the row is left as it is). */
  | 'entity_state_invalid'
  /** A durable entity's snapshot is over maxEntitySnapshotBytes or not encodable: its message was not committed. */
  | 'entity_snapshot_invalid'
  /** A message its entity type's schema refused on the host: it never reached `receive` (issue 37). */
  | 'invalid_message';

/**
 * The runtime's error: `code` says which rule was broken (bad input, unknown type, timeout, ...), the message says
 * what and why. The runtime (outside the store, which throws PlacementStoreError) throws or rejects with it.
 */
export class ActorTsError extends CodedError<ErrorCode> {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
    this.name = 'ActorTsError';
  }
}
