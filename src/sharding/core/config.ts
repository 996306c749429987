// Sharding configuration: one typed object with documented defaults (Pekko's `pekko.cluster.sharding`
// settings where they exist), and the validation that turns a partial user object into a complete one.
import { ActorTsError } from '../../errors.js';

/** Every sharding setting, with Pekko's names where they exist; each field says its default. */
export interface ShardingConfig {
  /** How often the coordinator asks the strategy which shards to move. Pekko: rebalance-interval. Default 10_000. */
  readonly rebalanceIntervalMs: number;
  /**
   * Upper bound on one shard's whole hand-off (BeginHandOff .. ShardStopped). On timeout the shard stays
   * where it was. Pekko: handoff-timeout. Default 60_000.
   */
  readonly handOffTimeoutMs: number;
  /**
   * Messages a region holds for shards whose home it does not know yet (all shards together). Beyond this,
   * new messages are dropped and counted. Pekko: buffer-size. Default 100_000.
   */
  readonly bufferSize: number;
  /**
   * Period of every retry in the protocol: region registration, shard-home requests for buffered shards,
   * hand-off messages, HostShard, requests to the coordinator. Pekko: retry-interval. Default 2_000.
   */
  readonly retryIntervalMs: number;
  /**
   * How long a new coordinator waits for the regions of reachable members to re-register before it
   * allocates shards it has never heard of (a home reported late would otherwise be given away). Ends early
   * once every expected region registered. Default 5_000.
   */
  readonly coordinatorWarmupMs: number;
  /** Deadline for `getShardLocations`, `rebalanceNow` and `requestRebalance`. Default 10_000. */
  readonly requestTimeoutMs: number;
  /** Timeout of `ask` when the caller gives none. Default 5_000. */
  readonly askTimeoutMs: number;
  /**
   * How many times one entity message may be forwarded between regions whose home caches disagree before
   * it is dropped (and counted): stale caches during a move must not bounce a message forever. Default 4.
   */
  readonly maxForwardHops: number;
  /**
   * How long the shards of a member downed by the others keep it as their home before they are allocated
   * elsewhere: time for that node to learn from gossip that it is down and stop them, if it did not down
   * itself (a long pause, or a partition it cannot see as a minority). Pekko: down-removal-margin.
   * 0 re-allocates at once. Default 2_000 (two gossip rounds).
   */
  readonly downRemovalMarginMs: number;
  /**
   * Largest encoded snapshot of one entity carried by a graceful hand-off; a larger (or unencodable) one
   * starts fresh on the new host, logged and counted. At most 8 MiB, so one entity fits a frame. Default 1 MiB.
   */
  readonly maxEntitySnapshotBytes: number;
  /** Byte budget of one chunk of a shard's state transfer (a larger single entity travels alone). Default 256 KiB. */
  readonly stateChunkBytes: number;
  /**
   * State a coordinator (and a new host) holds for shards between the old host's ShardStopped and the new
   * home's ShardStarted, all shards together; beyond it the oldest transfer is dropped (state lost). Default 64 MiB.
   */
  readonly maxHandOffStateBytes: number;
  /** Deadline of `EntityRef.send` when the caller gives none. Default 60_000. */
  readonly sendTimeoutMs: number;
  /** Sends a region keeps retrying at once (all shards); beyond it `send` rejects with `buffer_overflow`. Default 100_000. */
  readonly maxOutstandingSends: number;
  /** The same bound per shard. Default 10_000. */
  readonly maxOutstandingSendsPerShard: number;
}

/** The bounds a hand-off's state is packed under (region/shard-state.ts, region/reshipped-chunks.ts). */
export type StateLimits = Pick<ShardingConfig, 'maxEntitySnapshotBytes' | 'stateChunkBytes'>;

/** The sharding settings used when none are given. */
export const DEFAULT_SHARDING_CONFIG: ShardingConfig = Object.freeze({
  rebalanceIntervalMs: 10_000,
  handOffTimeoutMs: 60_000,
  bufferSize: 100_000,
  retryIntervalMs: 2_000,
  coordinatorWarmupMs: 5_000,
  requestTimeoutMs: 10_000,
  askTimeoutMs: 5_000,
  maxForwardHops: 4,
  downRemovalMarginMs: 2_000,
  maxEntitySnapshotBytes: 1024 * 1024,
  stateChunkBytes: 256 * 1024,
  maxHandOffStateBytes: 64 * 1024 * 1024,
  sendTimeoutMs: 60_000,
  maxOutstandingSends: 100_000,
  maxOutstandingSendsPerShard: 10_000,
});

/** Lower bounds per setting: 0 is allowed only where it means something (no buffering, no warm-up). */
const MINIMUM: Readonly<Record<keyof ShardingConfig, number>> = {
  rebalanceIntervalMs: 1,
  handOffTimeoutMs: 1,
  bufferSize: 0,
  retryIntervalMs: 1,
  coordinatorWarmupMs: 0,
  requestTimeoutMs: 1,
  askTimeoutMs: 1,
  // The first forward from the sender's region is hop 0 -> 1, so 1 is the least that lets messages travel.
  maxForwardHops: 1,
  downRemovalMarginMs: 0,
  maxEntitySnapshotBytes: 1,
  stateChunkBytes: 1,
  maxHandOffStateBytes: 0,
  sendTimeoutMs: 1,
  maxOutstandingSends: 0,
  maxOutstandingSendsPerShard: 0,
};

/** Upper bounds other than the timer limit: hop counts travel in a byte, one entity's state must fit a frame. */
const MAXIMUM: Partial<Readonly<Record<keyof ShardingConfig, number>>> = {
  maxForwardHops: 255,
  maxEntitySnapshotBytes: 8 * 1024 * 1024,
  stateChunkBytes: 8 * 1024 * 1024,
};

/** Fills in defaults and validates; throws `invalid_argument` naming the first bad setting. */
export function resolveShardingConfig(partial: Partial<ShardingConfig> = {}): ShardingConfig {
  if (typeof partial !== 'object' || partial === null) {
    throw new ActorTsError('invalid_argument', 'sharding config must be an object');
  }
  const resolved: Record<string, number> = { ...DEFAULT_SHARDING_CONFIG };
  for (const [key, value] of Object.entries(partial)) {
    if (!(key in DEFAULT_SHARDING_CONFIG)) {
      throw new ActorTsError('invalid_argument', `unknown sharding config setting "${key}"`);
    }
    if (value === undefined) continue;
    const min = MINIMUM[key as keyof ShardingConfig];
    // Durations feed setTimeout, which overflows above 2^31 - 1; hop counts travel in a field capped at 255.
    const max = MAXIMUM[key as keyof ShardingConfig] ?? 2_147_483_647;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new ActorTsError(
        'invalid_argument',
        `sharding config "${key}" must be an integer in ${min}..${max}, got ${String(value)}`,
      );
    }
    resolved[key] = value;
  }
  return Object.freeze(resolved as unknown as ShardingConfig);
}
