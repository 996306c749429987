// A shard's life in the coordinator, as data: the status a shard is in (one union), the record of a hand-off,
// and the events that move a shard from one status to the next (the only changes CoordinatorState.apply
// takes). Types only, plus the one reading every status needs: which region is the shard's home.

/** 'begin': waiting for BeginHandOffAck from every region; 'handoff': waiting for the owner's ShardStopped. */
export type HandOffPhase = 'begin' | 'handoff';

/** Why a hand-off started: explain's history names it. */
export type HandOffCause = 'rebalance' | 'manual' | 'drain' | 'leave' | 'down-margin' | 'stopping' | 'state-held';

/** One hand-off of one shard, as data (its timer is the coordinator's, by id). */
export interface HandOffRecord {
  /** Echoed by the owner's ShardStopped: only the report of this very stop ends it. */
  readonly id: number;
  /** The region that runs (or may run) the shard and must stop it. */
  readonly owner: string;
  readonly phase: HandOffPhase;
  /** Regions that have not yet acknowledged BeginHandOff (empty in the 'handoff' phase). */
  readonly pendingAcks: ReadonlySet<string>;
  readonly startedAtMs: number;
  readonly cause: HandOffCause;
}

/**
 * Where a shard is in its life. A shard with no entry is `unallocated`: nobody asked for it, or it lost its
 * home and nobody has asked since.
 * - `waiting`: asked for, without a home: the warm-up gate holds it (`warm-up`), or the strategy has no home
 *   for it now (`no-home`, a require pin no candidate meets). `freed`: it left its home by a hand-off while the
 *   gate was closed, so every region hears of its next home.
 * - `starting`: sent HostShard, not yet confirmed by ShardStarted (the retry tick sends it again).
 * - `running`: its home runs it.
 * - `handingOff`: moving off `home` (undefined for a shard adopted as stopping, whose owner was never its home
 *   here, or once the home was removed).
 */
export type ShardStatus =
  | {
      readonly kind: 'waiting';
      readonly reason: 'warm-up' | 'no-home';
      readonly requesters: ReadonlySet<string>;
      readonly freed: boolean;
    }
  | { readonly kind: 'starting'; readonly region: string }
  | { readonly kind: 'running'; readonly region: string }
  | { readonly kind: 'handingOff'; readonly home: string | undefined; readonly handOff: HandOffRecord };

export type ShardStatusKind = ShardStatus['kind'] | 'unallocated';

/** Everything that changes the coordinator's state. */
export type CoordinatorEvent =
  | { readonly type: 'RegionRegistered'; readonly region: string }
  | { readonly type: 'ProxyRegistered'; readonly region: string }
  /** A registered region reports hosting the shard: it becomes the home unless the shard has one. */
  | { readonly type: 'ShardClaimed'; readonly region: string; readonly shardId: number }
  /** The coordinator chose a home and sends it HostShard. */
  | { readonly type: 'ShardAllocated'; readonly region: string; readonly shardId: number }
  /** A region confirmed the start of a shard it was sent. */
  | { readonly type: 'ShardStarted'; readonly region: string; readonly shardId: number }
  /** A region runs a shard with no home and no hand-off: it becomes the home. */
  | { readonly type: 'ShardAdopted'; readonly region: string; readonly shardId: number }
  /** The warm-up gate holds the shard's allocation (and the requester's answer) until it opens. */
  | { readonly type: 'ShardDeferred'; readonly shardId: number; readonly requester?: string; readonly freed?: boolean }
  /** The strategy has no home for the shard now. */
  | { readonly type: 'ShardWaiting'; readonly shardId: number; readonly requesters: Iterable<string> }
  | { readonly type: 'RegionLeaving'; readonly region: string }
  /** A region (or proxy) is gone: its shards lose their home. */
  | { readonly type: 'RegionTerminated'; readonly region: string }
  | {
      readonly type: 'HandOffStarted';
      readonly shardId: number;
      readonly handOff: Omit<HandOffRecord, 'pendingAcks'> & { readonly pendingAcks: Iterable<string> };
    }
  /** A region acknowledged BeginHandOff (or is gone, so the hand-off stops waiting for it). */
  | { readonly type: 'HandOffAcknowledged'; readonly shardId: number; readonly region: string }
  /** Every region stopped routing to the shard: the owner is sent HandOff. */
  | { readonly type: 'HandOffPhaseEntered'; readonly shardId: number }
  /** The owner stopped the shard (or is gone): the shard has no home until allocated again. */
  | { readonly type: 'HandOffCompleted'; readonly shardId: number; readonly id: number }
  /** The hand-off ran out of time: the shard stays where it is. */
  | { readonly type: 'HandOffTimedOut'; readonly shardId: number; readonly id: number }
  /** The coordinator stops: every hand-off is dropped. */
  | { readonly type: 'HandOffsAbandoned' };

/** One line of a shard's history: what happened, when (the coordinator's clock). */
export interface HistoryEntry {
  readonly atMs: number;
  readonly event: CoordinatorEvent;
}

export interface RegionLocations {
  readonly address: string;
  readonly shards: number[];
}

/** The shard's home: the region that runs or starts it, or that a hand-off moves it off. */
export function homeIn(status: ShardStatus | undefined): string | undefined {
  switch (status?.kind) {
    case 'starting':
    case 'running':
      return status.region;
    case 'handingOff':
      return status.home;
    default:
      return undefined;
  }
}
