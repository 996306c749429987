// Giving shards without a home one: on request (GetShardHome), after a hand-off, once the warm-up gate opens,
// and again for the shards the strategy had no home for ("no home now": a hard placement rule no candidate
// satisfies, or no candidate at all) whenever something that may change that happens. Those are asked again
// only on such events (membership, registrations, placements, a pin expiring), never on a timer of their
// own, so an unsatisfiable rule costs nothing while nothing changes.
import type { ShardingMessage } from '../protocol/messages.js';
import type { RoomBasics, SendPort } from './ports.js';

/** Where ShardHomes' calls go (wired in rooms.ts): the warm-up gate, the allocator, the regions. */
export interface ShardHomesPort extends SendPort {
  /** Sends to every registered region and proxy (rooms.ts: the send of SendPort to each). */
  broadcast(message: ShardingMessage): void;
  /** Chooses a home, records it and sends HostShard (Allocator.allocate); undefined when there is none now. */
  allocate(shardId: number): string | undefined;
  /** True when a shard nobody reported may be given a home (WarmUpGate.open). */
  gateOpen(): boolean;
}

export class ShardHomes {
  constructor(
    private readonly options: RoomBasics,
    private readonly port: ShardHomesPort,
  ) {}

  /** Shards the strategy has no home for now, waiting for a change that may give them one (the gate's not counted). */
  get waitingCount(): number {
    return this.options.state.waiting('no-home').length;
  }

  /**
   * A registered region reports hosting the shard: a shard without a home gets it, and whoever waited for the
   * shard hears of it; a shard with another home keeps it, and that home is returned (the claimant must learn
   * it and stop its copy).
   */
  claim(region: string, shardId: number): string | undefined {
    const { state } = this.options;
    const before = state.statusOf(shardId);
    state.apply({ type: 'ShardClaimed', region, shardId });
    const home = state.homeOf(shardId);
    if (before?.kind === 'waiting' && home !== undefined) this.answer(shardId, home, before.requesters);
    return home !== undefined && home !== region ? home : undefined;
  }

  /**
   * A registered region runs a shard that has no home and no hand-off: it becomes the home, as a registration
   * would make it. Not while the warm-up gate holds the shard: a region not heard from yet may run it too.
   */
  adopt(region: string, shardId: number): void {
    const { state } = this.options;
    const before = state.statusOf(shardId);
    const waiting = before?.kind === 'waiting' && before.reason === 'no-home' ? before : undefined;
    if ((before !== undefined && waiting === undefined) || !state.isRegion(region)) return;
    state.apply({ type: 'ShardAdopted', region, shardId });
    if (waiting !== undefined) this.answer(shardId, region, waiting.requesters);
  }

  /** Holds a shard's allocation (and its requester's answer) until the warm-up gate opens. */
  defer(shardId: number, requester?: string): void {
    this.options.state.apply({ type: 'ShardDeferred', shardId, ...(requester === undefined ? {} : { requester }) });
  }

  /** True while the warm-up gate holds the shard's allocation. */
  isDeferred(shardId: number): boolean {
    const status = this.options.state.statusOf(shardId);
    return status?.kind === 'waiting' && status.reason === 'warm-up';
  }

  /**
   * A hand-off ended with the shard stopped (or its owner removed): allocated again at once, every region learns
   * where. Says what became of it: `homed` (allocated now), `claimed` (it has a home already), `deferred` (until
   * the warm-up gate opens) or `waiting` (no region may take it now).
   */
  freed(shardId: number): 'homed' | 'claimed' | 'deferred' | 'waiting' {
    const { port } = this;
    const { state } = this.options;
    // Claimed by a registration while it was being handed off (a region that runs it reported to a new
    // coordinator): that home stands, and allocating it again would start a second copy.
    const home = state.homeOf(shardId);
    if (home !== undefined) {
      this.announce(shardId, home);
      return 'claimed';
    }
    if (!port.gateOpen()) {
      // For the reason GetShardHome waits: a region not heard from yet may run this shard. It is allocated
      // (and announced) once the gate opens.
      state.apply({ type: 'ShardDeferred', shardId, freed: true });
      return 'deferred';
    }
    const region = port.allocate(shardId);
    if (region === undefined) {
      this.options.logger.info({ shardId }, 'no home for the freed shard; it is allocated once a region may take it');
      state.apply({ type: 'ShardWaiting', shardId, requesters: [] });
      return 'waiting';
    }
    this.announce(shardId, region);
    return 'homed';
  }

  /**
   * A removed region's shards that no hand-off frees (no margin ran for it, or their hand-off timed out and
   * left them there): each is given a home now, in this one round, as a freed shard is, so the regions'
   * buffered messages go on the announcement instead of waiting for each shard's next request.
   */
  rehome(shardIds: Iterable<number>): void {
    const { state } = this.options;
    for (const shardId of shardIds)
      if (state.homeOf(shardId) === undefined && !state.isHandingOff(shardId)) this.freed(shardId);
  }

  allocateAndAnnounce(shardId: number, requesters: Iterable<string>): void {
    const { state } = this.options;
    const region = this.port.allocate(shardId);
    // No home now: the requesters keep their messages buffered (and ask again on their retry tick); the
    // shard is also allocated as soon as a change may give it a home (retryWaiting).
    if (region === undefined) {
      state.apply({ type: 'ShardWaiting', shardId, requesters });
      return;
    }
    this.answer(shardId, region, requesters);
  }

  /**
   * Answers the GetShardHome requests that waited for the warm-up or for an unreachable member, then asks
   * again for the shards without a home (its callers are the changes that may give them one).
   */
  flushDeferred(): void {
    if (!this.port.gateOpen()) return;
    for (const [shardId, { freed, requesters }] of this.options.state.waiting('warm-up')) {
      // A freed shard's regions asked while it was moving (unanswered then): they all hear of its home.
      if (freed) this.freed(shardId);
      else this.allocateAndAnnounce(shardId, requesters);
    }
    this.retryWaiting();
  }

  /** Asks again for every shard without a home; each one allocated is announced to every region. */
  retryWaiting(): void {
    const { state } = this.options;
    if (state.counts.waiting === 0 || !this.port.gateOpen()) return;
    for (const [shardId] of state.waiting('no-home')) {
      const region = this.port.allocate(shardId);
      if (region !== undefined) this.announce(shardId, region);
    }
  }

  private answer(shardId: number, region: string, requesters: Iterable<string>): void {
    const { typeName } = this.options;
    for (const requester of requesters) this.port.send(requester, { type: 'ShardHome', typeName, shardId, region });
  }

  private announce(shardId: number, region: string): void {
    this.port.broadcast({ type: 'ShardHome', typeName: this.options.typeName, shardId, region });
  }
}
