// Sharding configuration: one typed object with documented defaults (Pekko's `pekko.cluster.sharding`
// settings where they exist), and the validation that turns a partial user object into a complete one.
import { ActorTsError } from '../errors.js';

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
}

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
    const max = key === 'maxForwardHops' ? 255 : 2_147_483_647;
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
