// Cluster membership settings: one typed object, every field optional on input with a documented default.
// `resolveClusterConfig` validates once at construction so the running cluster never sees a bad value.
import { ActorTsError } from '../../errors.js';
import { DEFAULT_MAX_CLOCK_OFFSET_MS } from './clock-offset.js';
import { NodeAddress } from '../address.js';
import { attributesProblem, normalizeAttributes, type NodeAttributes } from '../attributes.js';

/** The phi-accrual failure detector's settings (Pekko's names and defaults where they exist). */
export interface FailureDetectorConfig {
  /** Phi above which a member is considered unreachable; default 8 (Pekko's cluster default). */
  readonly threshold: number;
  /** Heartbeat intervals remembered for the mean and deviation; default 1,000. */
  readonly maxSampleSize: number;
  /** Floor of the deviation, so a very regular network does not make phi hair-trigger; default 100 ms. */
  readonly minStdDeviationMs: number;
  /** Pause tolerated on top of the expected interval (GC, load); default 3,000 ms. */
  readonly acceptableHeartbeatPauseMs: number;
  /** Assumed interval before real samples exist; default 1,000 ms. */
  readonly firstHeartbeatEstimateMs: number;
}

/**
 * Every cluster setting, resolved: seeds, version, roles, failure detection, gossip and downing. Each field says its
 * default.
 */
export interface ClusterConfig {
  /**
   * Nodes contacted to join; default none. The first seed forms a new cluster when nobody answers within
   * `seedNodeTimeoutMs` (at once when it is the only seed). With no seeds the node forms a cluster of its own.
   */
  readonly seedNodes: ReadonlyArray<NodeAddress>;
  /** This node's application version, compared by strategies during rolling updates; default '1.0.0'. */
  readonly appVersion: string;
  /** This node's roles; default none. */
  readonly roles: ReadonlyArray<string>;
  /**
   * This node's attributes (`zone: 'eu-west'`...), gossiped with its member record like roles so placement
   * selectors can match them; keys and values match `[A-Za-z0-9_.-]{1,64}`, at most 32; default none.
   */
  readonly attributes: NodeAttributes;
  /** Interval of heartbeats to the monitored members; default 1,000 ms. */
  readonly heartbeatIntervalMs: number;
  /**
   * How many members heartbeat each member (Pekko's `monitored-by-nr-of-members`): each node monitors the
   * next this many members on a ring of the sorted member addresses, so heartbeats per node stay constant as
   * the cluster grows; in a cluster of at most this many + 1 members everyone monitors everyone; default 9.
   */
  readonly monitoredByNrOfMembers: number;
  readonly failureDetector: FailureDetectorConfig;
  /** Interval of gossip to a random member and of leader actions; default 1,000 ms. */
  readonly gossipIntervalMs: number;
  /** How long the first seed waits for an existing cluster before forming one; default 5,000 ms. */
  readonly seedNodeTimeoutMs: number;
  /** Interval of join attempts until this node is welcomed; default 1,000 ms. */
  readonly retryJoinIntervalMs: number;
  /**
   * How long a member may be unreachable before the cluster downs it: the default of `stableAfterMs` (and
   * so of `minorityDownAfterMs`); default 10,000 ms.
   */
  readonly downAfterMs: number;
  /**
   * Pekko's `stable-after`: the leader decides downing (split-brain-decision.ts: keep-majority, and the
   * indirectly connected members of a non-transitive cut) only once the gossiped reachability table has not
   * changed for this long, so every node of its side has merged the same table. Equal halves: the half with
   * the lowest address keeps running. Default `downAfterMs` (10,000 ms), what Pekko recommends for clusters
   * of about ten nodes (its own default, 20 s, is sized for a thousand).
   */
  readonly stableAfterMs: number;
  /**
   * A side without a majority downs itself this long after it first saw a member unreachable, so it stops
   * hosting before the majority takes its shards over; default 75% of `stableAfterMs`. Must not exceed it.
   */
  readonly minorityDownAfterMs: number;
  /**
   * Confirm a silent member's death by probing its address (death-confirmation.ts): when its host refuses
   * connections twice in a row, the member is marked unreachable at once and the leader downs it without
   * waiting out stableAfterMs. Silence alone (a paused or starved process, a cut link) never confirms. Turn
   * off where a firewall answers dropped traffic with TCP resets or ICMP port-unreachable; default true.
   */
  readonly confirmDeaths: boolean;
  /** Bound on the registered onLeaving tasks (shard hand-off) during a graceful leave; default 20,000 ms. */
  readonly leaveTimeoutMs: number;
  /** Bound on leaving -> exiting -> removed once the tasks are done; default 10,000 ms. */
  readonly exitTimeoutMs: number;
  /**
   * A joining member is made weakly-up after this long when unreachable members block convergence (so new
   * nodes can take traffic during a partition); 0 disables; default 7,000 ms.
   */
  readonly weaklyUpAfterMs: number;
  /**
   * How long a removed member's record stays in the gossip (so the member and every node learn of the
   * removal) before it is replaced by a tombstone; default 60,000 ms.
   */
  readonly removedRetentionMs: number;
  /**
   * How long a tombstone keeps an old copy of a pruned record from coming back; default 86,400,000 ms
   * (one day, Pekko's `prune-gossip-tombstones-after`).
   */
  readonly tombstoneTtlMs: number;
  /**
   * How far this node's wall clock may be from the median of its peers' (measured on heartbeats) before it refuses
   * placement writes with `clock_skew`: its timestamps would be held back by them, so an acknowledged pin would not
   * be in force. Default 5,000 ms, far below the placement store's hold-back bound.
   */
  readonly maxClockOffsetMs: number;
}

/** Input form: every field optional, seed nodes may be given as strings. */
export type ClusterConfigInput = Partial<
  Omit<ClusterConfig, 'seedNodes' | 'failureDetector' | 'minorityDownAfterMs' | 'stableAfterMs'>
> & {
  readonly seedNodes?: ReadonlyArray<NodeAddress | string>;
  readonly failureDetector?: Partial<FailureDetectorConfig>;
  readonly stableAfterMs?: number;
  readonly minorityDownAfterMs?: number;
};

/** The failure detector settings used when none are given. */
export const DEFAULT_FAILURE_DETECTOR_CONFIG: FailureDetectorConfig = {
  threshold: 8,
  maxSampleSize: 1_000,
  minStdDeviationMs: 100,
  acceptableHeartbeatPauseMs: 3_000,
  firstHeartbeatEstimateMs: 1_000,
};

/** The cluster settings every field of ClusterConfigInput defaults to. */
export const DEFAULT_CLUSTER_CONFIG: Omit<ClusterConfig, 'minorityDownAfterMs' | 'stableAfterMs'> = {
  seedNodes: [],
  appVersion: '1.0.0',
  roles: [],
  attributes: {},
  heartbeatIntervalMs: 1_000,
  monitoredByNrOfMembers: 9,
  failureDetector: DEFAULT_FAILURE_DETECTOR_CONFIG,
  gossipIntervalMs: 1_000,
  seedNodeTimeoutMs: 5_000,
  retryJoinIntervalMs: 1_000,
  downAfterMs: 10_000,
  confirmDeaths: true,
  leaveTimeoutMs: 20_000,
  exitTimeoutMs: 10_000,
  weaklyUpAfterMs: 7_000,
  removedRetentionMs: 60_000,
  tombstoneTtlMs: 86_400_000,
  maxClockOffsetMs: DEFAULT_MAX_CLOCK_OFFSET_MS,
};

/** Applies defaults and validates; throws `invalid_argument` (or `invalid_address`) naming the bad field. */
export function resolveClusterConfig(input: ClusterConfigInput = {}): ClusterConfig {
  const d = DEFAULT_CLUSTER_CONFIG;
  const seedNodes = (input.seedNodes ?? d.seedNodes).map((s) => (typeof s === 'string' ? NodeAddress.parse(s) : s));
  const appVersion = input.appVersion ?? d.appVersion;
  if (typeof appVersion !== 'string' || appVersion.length === 0 || appVersion.length > 64) {
    throw bad('appVersion must be a non-empty string of at most 64 characters');
  }
  const roles = [...(input.roles ?? d.roles)];
  for (const role of roles) {
    if (typeof role !== 'string' || role.length === 0 || role.length > 64)
      throw bad(`invalid role ${JSON.stringify(role)}`);
  }
  const attributesInput = input.attributes ?? d.attributes;
  const attributesError = attributesProblem(attributesInput);
  if (attributesError !== undefined) throw bad(attributesError);
  const attributes = normalizeAttributes(attributesInput);
  const fdInput = input.failureDetector ?? {};
  // Each setting checked under its full name, e.g. `failureDetector.threshold`.
  const fdSetting = (key: keyof FailureDetectorConfig): [string, number] => [
    `failureDetector.${key}`,
    fdInput[key] ?? DEFAULT_FAILURE_DETECTOR_CONFIG[key],
  ];
  const fd: FailureDetectorConfig = {
    threshold: positive(...fdSetting('threshold')),
    maxSampleSize: integer(...fdSetting('maxSampleSize'), 1),
    minStdDeviationMs: positive(...fdSetting('minStdDeviationMs')),
    acceptableHeartbeatPauseMs: nonNegative(...fdSetting('acceptableHeartbeatPauseMs')),
    firstHeartbeatEstimateMs: positive(...fdSetting('firstHeartbeatEstimateMs')),
  };

  const downAfterMs = positive('downAfterMs', input.downAfterMs ?? d.downAfterMs);
  const stableAfterMs = positive('stableAfterMs', input.stableAfterMs ?? downAfterMs);
  const minorityDownAfterMs = positive(
    'minorityDownAfterMs',
    input.minorityDownAfterMs ?? Math.round(stableAfterMs * 0.75),
  );
  if (minorityDownAfterMs > stableAfterMs) throw bad('minorityDownAfterMs must not exceed stableAfterMs');
  return {
    seedNodes,
    appVersion,
    roles,
    attributes,
    heartbeatIntervalMs: positive('heartbeatIntervalMs', input.heartbeatIntervalMs ?? d.heartbeatIntervalMs),
    monitoredByNrOfMembers: integer(
      'monitoredByNrOfMembers',
      input.monitoredByNrOfMembers ?? d.monitoredByNrOfMembers,
      1,
    ),
    failureDetector: fd,
    gossipIntervalMs: positive('gossipIntervalMs', input.gossipIntervalMs ?? d.gossipIntervalMs),
    seedNodeTimeoutMs: positive('seedNodeTimeoutMs', input.seedNodeTimeoutMs ?? d.seedNodeTimeoutMs),
    retryJoinIntervalMs: positive('retryJoinIntervalMs', input.retryJoinIntervalMs ?? d.retryJoinIntervalMs),
    downAfterMs,
    stableAfterMs,
    minorityDownAfterMs,
    confirmDeaths: boolean('confirmDeaths', input.confirmDeaths ?? d.confirmDeaths),
    leaveTimeoutMs: positive('leaveTimeoutMs', input.leaveTimeoutMs ?? d.leaveTimeoutMs),
    exitTimeoutMs: positive('exitTimeoutMs', input.exitTimeoutMs ?? d.exitTimeoutMs),
    weaklyUpAfterMs: nonNegative('weaklyUpAfterMs', input.weaklyUpAfterMs ?? d.weaklyUpAfterMs),
    maxClockOffsetMs: positive('maxClockOffsetMs', input.maxClockOffsetMs ?? d.maxClockOffsetMs),
    removedRetentionMs: positive('removedRetentionMs', input.removedRetentionMs ?? d.removedRetentionMs),
    tombstoneTtlMs: positive('tombstoneTtlMs', input.tombstoneTtlMs ?? d.tombstoneTtlMs),
  };
}

function positive(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw bad(`${name} must be a finite number > 0, got ${String(value)}`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw bad(`${name} must be a finite number >= 0, got ${String(value)}`);
  return value;
}

function boolean(name: string, value: boolean): boolean {
  if (typeof value !== 'boolean') throw bad(`${name} must be true or false, got ${String(value)}`);
  return value;
}

function integer(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) throw bad(`${name} must be an integer >= ${min}, got ${String(value)}`);
  return value;
}

function bad(message: string): ActorTsError {
  return new ActorTsError('invalid_argument', `invalid cluster config: ${message}`);
}
