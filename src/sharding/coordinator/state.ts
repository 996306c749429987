// The coordinator's state as one value: every shard's place in its life (one status from one union), the
// registered regions and proxies, and the regions leaving. It changes only through `apply(event)`, with the
// events as data (Pekko's ShardCoordinator.State.updated): each event names what happened, `apply` checks
// the invariants it touches and records the shard's history, so "where is shard 42 in its life?" has one
// answer (`statusOf`) and "how did it get there?" another (`historyOf`).
//
// `apply` changes the value in place rather than returning a copy: a copy of a 100,000-shard map per event
// would make every allocation O(shards). The coordinator owns the one instance; everybody else reads it.
import { CodedError } from '../../errors.js';
import { isGone, type MemberInfo } from '../../cluster/member.js';

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
  /**
   * The region the owner sends the shard's state to itself (protocol 10), chosen as the HandOff phase began:
   * the shard's next home, unless it cannot be by then (hand-off-states.ts). Unset: the state comes here.
   */
  readonly to?: string;
  /**
   * The region the owner was told (BeginHandOff, protocol 12) to send the states it holds to ahead of its stop:
   * the shard's likely next home as the hand-off began. Only in the 'begin' phase's record; `to` is chosen again.
   */
  readonly early?: string;
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
  /** Every region stopped routing to the shard: the owner is sent HandOff (naming `to`, when set). */
  | { readonly type: 'HandOffPhaseEntered'; readonly shardId: number; readonly to?: string }
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

/** Events kept per shard for explain. */
export const HISTORY_PER_SHARD = 8;

/** A broken invariant: a bug in the coordinator, never bad input from the network (handlers check that). */
export class CoordinatorInvariantError extends CodedError<'coordinator_invariant'> {
  override readonly name = 'CoordinatorInvariantError';
  constructor(message: string) {
    super('coordinator_invariant', message);
  }
}

export class CoordinatorState {
  /** Registrations from nodes not yet members here, to be asked again once they are (EarlyRegistrations, below). */
  readonly early = new EarlyRegistrations();
  private readonly shards = new Map<number, ShardStatus>();
  /** Non-proxy regions and their shards (those whose status names them), each set in allocation order. */
  private readonly regions = new Map<string, Set<number>>();
  private readonly proxies = new Set<string>();
  /** Regions that asked to leave: their shards are being handed off and they get no new ones. */
  private readonly leaving = new Set<string>();
  // Indexes of the statuses the coordinator walks on its ticks; kept by `apply` alone, with the statuses.
  private readonly byKind = { waiting: new Set<number>(), starting: new Set<number>(), handingOff: new Set<number>() };
  private homed = 0;
  private readonly history = new Map<number, HistoryEntry[]>();
  /** shardMapSnapshot's copy of each region's shards, dropped whenever they change. */
  private readonly copies = new Map<string, ReadonlySet<number>>();

  /** @param clock when events happen, for the history (the coordinator's scheduler). */
  constructor(private readonly clock: () => number = Date.now) {}

  /**
   * The one way the state changes. Throws CoordinatorInvariantError, changing nothing, on an impossible event.
   * `atMs` (default: the clock) dates the event in the history of the shards it touched.
   */
  apply(event: CoordinatorEvent, atMs: number = this.clock()): void {
    const record = TRANSITIONS[event.type] as (state: CoordinatorState, event: CoordinatorEvent) => number[];
    for (const shardId of record(this, event)) this.remember(shardId, event, atMs);
  }

  // ---- queries ----

  statusOf(shardId: number): ShardStatus | undefined {
    return this.shards.get(shardId);
  }

  kindOf(shardId: number): ShardStatusKind {
    return this.shards.get(shardId)?.kind ?? 'unallocated';
  }

  /** The last events of the shard, oldest first (at most HISTORY_PER_SHARD). */
  historyOf(shardId: number): ReadonlyArray<HistoryEntry> {
    return this.history.get(shardId) ?? [];
  }

  homeOf(shardId: number): string | undefined {
    return homeIn(this.shards.get(shardId));
  }

  /** A region or a proxy. */
  isRegistered(address: string): boolean {
    return this.regions.has(address) || this.proxies.has(address);
  }

  /** A non-proxy region. */
  isRegion(address: string): boolean {
    return this.regions.has(address);
  }

  isShuttingDown(address: string): boolean {
    return this.leaving.has(address);
  }

  /** The shards of a region, oldest allocation first (a copy). */
  shardsOf(region: string): number[] {
    return [...(this.regions.get(region) ?? [])];
  }

  /** Regions, then proxies: everyone who routes messages of this type. */
  registered(): string[] {
    return [...this.regions.keys(), ...this.proxies];
  }

  handOff(shardId: number): HandOffRecord | undefined {
    const status = this.shards.get(shardId);
    return status?.kind === 'handingOff' ? status.handOff : undefined;
  }

  isHandingOff(shardId: number): boolean {
    return this.byKind.handingOff.has(shardId);
  }

  /** The shards being handed off, ascending. */
  handingOff(): number[] {
    return [...this.byKind.handingOff].sort((a, b) => a - b);
  }

  /** Shards sent HostShard and not yet confirmed, with the region each was sent to. */
  pendingStarts(): Array<[shardId: number, region: string]> {
    return [...this.byKind.starting].map((shardId) => [shardId, this.homeOf(shardId) as string]);
  }

  /** Shards waiting for a home, with why and who asked (a snapshot: callers allocate while they iterate). */
  waiting(reason: 'warm-up' | 'no-home'): Array<[shardId: number, status: Extract<ShardStatus, { kind: 'waiting' }>]> {
    const result: Array<[number, Extract<ShardStatus, { kind: 'waiting' }>]> = [];
    for (const shardId of this.byKind.waiting) {
      const status = this.shards.get(shardId);
      if (status?.kind === 'waiting' && status.reason === reason) result.push([shardId, status]);
    }
    return result;
  }

  get counts(): {
    regions: number;
    proxies: number;
    allocatedShards: number;
    handOffs: number;
    waiting: number;
  } {
    return {
      regions: this.regions.size,
      proxies: this.proxies.size,
      allocatedShards: this.homed,
      handOffs: this.byKind.handingOff.size,
      waiting: this.byKind.waiting.size,
    };
  }

  /** The shards of every region, live and read-only: for the coordinator's own reading, never a strategy's. */
  shardMap(): ReadonlyMap<string, ReadonlySet<number>> {
    return this.regions;
  }

  /**
   * The shards of every region as a strategy gets them: copies, so it sees no later change and can make none
   * here. Each region's copy is kept until that region's shards change (a copy of the whole map per call made
   * allocating 10,000 shards cost 180 us each); one whose size no longer matches (a strategy changed it,
   * against its type) is copied again.
   */
  shardMapSnapshot(): ReadonlyMap<string, ReadonlySet<number>> {
    const snapshot = new Map<string, ReadonlySet<number>>();
    for (const [region, owned] of this.regions) {
      let copy = this.copies.get(region);
      if (copy === undefined || copy.size !== owned.size) this.copies.set(region, (copy = new Set(owned)));
      snapshot.set(region, copy);
    }
    return snapshot;
  }

  /** Where every allocated shard lives, by region (regions without shards included), sorted. */
  locations(): RegionLocations[] {
    return [...this.regions]
      .map(([address, shards]) => ({ address, shards: [...shards].sort((a, b) => a - b) }))
      .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  }

  /**
   * Every invariant over the whole state (O(shards)): each home is a registered region listing the shard,
   * each region lists only shards homed there, the indexes and the count match the statuses, a hand-off in its
   * HandOff phase waits for no acknowledgement. `apply` checks the ones an event touches; tests call this.
   */
  checkInvariants(): void {
    let homed = 0;
    for (const [shardId, status] of this.shards) {
      const home = homeIn(status);
      if (home !== undefined) {
        homed++;
        if (this.regions.get(home)?.has(shardId) !== true)
          fail(`shard ${shardId} is homed on ${home}, which does not list it`);
      }
      for (const kind of ['waiting', 'starting', 'handingOff'] as const)
        if (this.byKind[kind].has(shardId) !== (status.kind === kind)) fail(`shard ${shardId}: index ${kind} is stale`);
      if (status.kind === 'handingOff' && status.handOff.phase === 'handoff' && status.handOff.pendingAcks.size > 0)
        fail(`shard ${shardId}: a hand-off in its HandOff phase waits for acknowledgements`);
    }
    for (const [region, owned] of this.regions)
      for (const shardId of owned)
        if (this.homeOf(shardId) !== region) fail(`region ${region} lists shard ${shardId}, homed elsewhere`);
    for (const kind of ['waiting', 'starting', 'handingOff'] as const)
      for (const shardId of this.byKind[kind])
        if (this.shards.get(shardId)?.kind !== kind) fail(`shard ${shardId}: index ${kind} is stale`);
    if (homed !== this.homed) fail(`${this.homed} shards counted as homed, ${homed} are`);
  }

  // ---- the transitions' building blocks (called by TRANSITIONS only) ----

  /** @internal Sets a shard's status, keeping the region lists, indexes and count in step. */
  set(shardId: number, status: ShardStatus | undefined): void {
    const before = this.shards.get(shardId);
    const from = homeIn(before);
    const to = homeIn(status);
    if (to !== undefined && !this.regions.has(to)) fail(`shard ${shardId} homed on ${to}, not a registered region`);
    if (from !== to) {
      if (from !== undefined) {
        this.regions.get(from)?.delete(shardId);
        this.copies.delete(from);
        this.homed--;
      }
      if (to !== undefined) {
        this.regions.get(to)?.add(shardId);
        this.copies.delete(to);
        this.homed++;
      }
    }
    if (before !== undefined && before.kind !== 'running') this.byKind[before.kind].delete(shardId);
    if (status === undefined) this.shards.delete(shardId);
    else {
      this.shards.set(shardId, status);
      if (status.kind !== 'running') this.byKind[status.kind].add(shardId);
    }
  }

  /** @internal */
  regionEntry(region: string): { owned: Set<number> | undefined; proxy: boolean; leaving: boolean } {
    return { owned: this.regions.get(region), proxy: this.proxies.has(region), leaving: this.leaving.has(region) };
  }

  /** @internal */
  addRegion(region: string, proxy: boolean): boolean {
    if (proxy) {
      const added = !this.proxies.has(region);
      this.proxies.add(region);
      return added;
    }
    if (this.regions.has(region)) return false;
    this.regions.set(region, new Set());
    return true;
  }

  /** @internal */
  removeRegion(region: string): void {
    this.regions.delete(region);
    this.copies.delete(region);
    this.proxies.delete(region);
    this.leaving.delete(region);
  }

  /** @internal */
  markLeaving(region: string): void {
    this.leaving.add(region);
  }

  /** @internal */
  handingOffShards(): number[] {
    return [...this.byKind.handingOff];
  }

  private remember(shardId: number, event: CoordinatorEvent, atMs: number): void {
    let entries = this.history.get(shardId);
    if (entries === undefined) this.history.set(shardId, (entries = []));
    entries.push({ atMs, event });
    if (entries.length > HISTORY_PER_SHARD) entries.shift();
  }
}

function fail(message: string): never {
  throw new CoordinatorInvariantError(message);
}

type Transition<T extends CoordinatorEvent['type']> = (
  state: CoordinatorState,
  event: Extract<CoordinatorEvent, { type: T }>,
) => number[];

/** Each event's transition; returns the shards whose history records the event. */
const TRANSITIONS: { readonly [T in CoordinatorEvent['type']]: Transition<T> } = {
  RegionRegistered: (state, { region }) => (state.addRegion(region, false), []),
  ProxyRegistered: (state, { region }) => (state.addRegion(region, true), []),
  ShardClaimed: (state, { region, shardId }) => {
    if (state.regionEntry(region).owned === undefined)
      fail(`shard ${shardId} claimed by unregistered region ${region}`);
    const status = state.statusOf(shardId);
    if (status === undefined || status.kind === 'waiting') return (state.set(shardId, running(region)), [shardId]);
    if (status.kind === 'starting' && status.region === region) return (state.set(shardId, running(region)), []);
    if (status.kind === 'handingOff' && status.home === undefined)
      return (state.set(shardId, { ...status, home: region }), [shardId]);
    return [];
  },
  ShardAllocated: (state, { region, shardId }) => {
    const kind = state.kindOf(shardId);
    if (kind !== 'unallocated' && kind !== 'waiting') fail(`shard ${shardId} allocated while ${kind}`);
    state.set(shardId, { kind: 'starting', region });
    return [shardId];
  },
  ShardStarted: (state, { region, shardId }) => {
    const status = state.statusOf(shardId);
    if (status?.kind !== 'starting' || status.region !== region) return [];
    state.set(shardId, running(region));
    return [shardId];
  },
  ShardAdopted: (state, { region, shardId }) => {
    const kind = state.kindOf(shardId);
    if (kind !== 'unallocated' && kind !== 'waiting') fail(`shard ${shardId} adopted while ${kind}`);
    state.set(shardId, running(region));
    return [shardId];
  },
  ShardDeferred: (state, { shardId, requester, freed }) => {
    const status = state.statusOf(shardId);
    if (status !== undefined && status.kind !== 'waiting') fail(`shard ${shardId} deferred while ${status.kind}`);
    const requesters = new Set(status?.requesters);
    if (requester !== undefined) requesters.add(requester);
    const wasFreed = status?.freed === true;
    state.set(shardId, { kind: 'waiting', reason: 'warm-up', requesters, freed: wasFreed || freed === true });
    return status === undefined ? [shardId] : [];
  },
  ShardWaiting: (state, { shardId, requesters }) => {
    const status = state.statusOf(shardId);
    if (status !== undefined && status.kind !== 'waiting') fail(`shard ${shardId} waits while ${status.kind}`);
    const all = new Set([...(status?.requesters ?? []), ...requesters]);
    state.set(shardId, { kind: 'waiting', reason: 'no-home', requesters: all, freed: false });
    return status?.kind === 'waiting' && status.reason === 'no-home' ? [] : [shardId];
  },
  RegionLeaving: (state, { region }) => (state.markLeaving(region), []),
  RegionTerminated: (state, { region }) => {
    const lost = [...(state.regionEntry(region).owned ?? [])];
    for (const shardId of lost) {
      const status = state.statusOf(shardId);
      state.set(shardId, status?.kind === 'handingOff' ? { ...status, home: undefined } : undefined);
    }
    state.removeRegion(region);
    return lost;
  },
  HandOffStarted: (state, { shardId, handOff }) => {
    const status = state.statusOf(shardId);
    if (status?.kind === 'handingOff') fail(`shard ${shardId} is already being handed off`);
    if (handOff.to !== undefined && (handOff.phase !== 'handoff' || handOff.to === handOff.owner))
      fail(`hand-off of shard ${shardId} names a state destination it cannot have`);
    if (handOff.early !== undefined && (handOff.phase !== 'begin' || handOff.early === handOff.owner))
      fail(`hand-off of shard ${shardId} names an early state destination it cannot have`);
    const pendingAcks = handOff.phase === 'begin' ? new Set(handOff.pendingAcks) : new Set<string>();
    state.set(shardId, { kind: 'handingOff', home: homeIn(status), handOff: { ...handOff, pendingAcks } });
    return [shardId];
  },
  HandOffAcknowledged: (state, { shardId, region }) => {
    const status = state.statusOf(shardId);
    if (status?.kind !== 'handingOff' || status.handOff.phase !== 'begin' || !status.handOff.pendingAcks.has(region))
      return [];
    const pendingAcks = new Set(status.handOff.pendingAcks);
    pendingAcks.delete(region);
    state.set(shardId, { ...status, handOff: { ...status.handOff, pendingAcks } });
    return [];
  },
  HandOffPhaseEntered: (state, { shardId, to }) => {
    const status = state.statusOf(shardId);
    if (status?.kind !== 'handingOff' || status.handOff.phase !== 'begin' || status.handOff.pendingAcks.size > 0)
      fail(`hand-off of shard ${shardId} is not ready for its HandOff phase`);
    if (to === status.handOff.owner) fail(`hand-off of shard ${shardId} would send its state to its own owner`);
    // The early destination was the begin phase's: the HandOff names its own `to`.
    const { early: _told, ...begun } = status.handOff;
    const handOff = { ...begun, phase: 'handoff' as const, ...(to !== undefined && { to }) };
    state.set(shardId, { ...status, handOff });
    return [];
  },
  HandOffCompleted: (state, { shardId, id }) => {
    const status = current(state, shardId, id);
    const home = status.home === status.handOff.owner ? undefined : status.home;
    state.set(shardId, home === undefined ? undefined : running(home));
    return [shardId];
  },
  HandOffTimedOut: (state, { shardId, id }) => {
    const status = current(state, shardId, id);
    const { owner } = status.handOff;
    const home = status.home ?? (state.regionEntry(owner).owned === undefined ? undefined : owner);
    state.set(shardId, home === undefined ? undefined : running(home));
    return [shardId];
  },
  HandOffsAbandoned: (state) => {
    for (const shardId of state.handingOffShards()) {
      const home = state.homeOf(shardId);
      state.set(shardId, home === undefined ? undefined : running(home));
    }
    return [];
  },
};

function running(region: string): ShardStatus {
  return { kind: 'running', region };
}

/** The shard's status if it is being handed off by hand-off `id`; a bug otherwise. */
function current(state: CoordinatorState, shardId: number, id: number): Extract<ShardStatus, { kind: 'handingOff' }> {
  const status = state.statusOf(shardId);
  if (status?.kind !== 'handingOff' || status.handOff.id !== id) fail(`no hand-off ${id} of shard ${shardId}`);
  return status;
}

// Registrations that reached the coordinator before the membership it sees listed their node: a node that just
// came Up registers at once, and the coordinator's node may learn of the join a gossip round later. Ignoring
// such a registration left the new node without a coordinator (and every message it routed waiting) until its
// next retry, up to a retry interval later; remembering who tried lets the coordinator ask them to register
// again the moment they are members.

/** Most addresses remembered; a flood of registrations from non-members cannot grow this without bound. */
export const MAX_EARLY_REGISTRATIONS = 256;

export class EarlyRegistrations {
  private readonly waiting = new Set<string>();

  /** A registration from `from`, not a live member yet, was ignored. */
  note(from: string): void {
    if (this.waiting.has(from) || this.waiting.size >= MAX_EARLY_REGISTRATIONS) return;
    this.waiting.add(from);
  }

  /** The noted addresses that are live members now, forgotten here: each is to be asked to register. */
  admitted(members: ReadonlyMap<string, MemberInfo>): string[] {
    const admitted = [...this.waiting].filter((address) => {
      const member = members.get(address);
      return member !== undefined && !isGone(member.status);
    });
    for (const address of admitted) this.waiting.delete(address);
    return admitted;
  }

  get size(): number {
    return this.waiting.size;
  }
}
