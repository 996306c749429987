// Giving shards without a home one: on request (GetShardHome), after a hand-off, once the warm-up gate opens,
// and again for the shards the strategy had no home for ("no home now": a hard placement rule no candidate
// satisfies, or no candidate at all) whenever something that may change that happens. Those are asked again
// only on such events (membership, registrations, placements, a pin expiring), never on a timer of their
// own, so an unsatisfiable rule costs nothing while nothing changes.
import type { ShardingMessage } from '../protocol/messages.js';
import type { RoomBasics, SendPort } from './ports.js';
import { WaitingShards } from './waiting-shards.js';

/** Where ShardHomes' calls go (wired in rooms.ts): the warm-up gate, the allocator, the regions. */
export interface ShardHomesPort extends SendPort {
  /** Sends to every registered region and proxy (rooms.ts: the send of SendPort to each). */
  broadcast(message: ShardingMessage): void;
  /** Chooses a home, records it and sends HostShard (Allocator.allocate); undefined when there is none now. */
  allocate(shardId: number): string | undefined;
  /** True when a shard nobody reported may be given a home (WarmUpGate.open). */
  gateOpen(): boolean;
  /** Holds a shard's allocation (and its requester's answer) until the gate opens (WarmUpGate.defer). */
  defer(shardId: number, requester?: string): void;
  /** The held requests, once the gate is open; none while it is closed (WarmUpGate.takeDeferred). */
  takeDeferred(): Array<[shardId: number, requesters: ReadonlySet<string>]>;
}

export class ShardHomes {
  private readonly waiting = new WaitingShards();
  /** Shards freed while the gate was closed: announced to every region once allocated, as any freed shard. */
  private readonly heldFreed = new Set<number>();

  constructor(
    private readonly options: RoomBasics,
    private readonly port: ShardHomesPort,
  ) {}

  /** Shards without a home now, waiting for a change that may give them one. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /**
   * A hand-off ended with the shard stopped (or its owner removed): allocated again at once, every region learns
   * where. Says what became of it: `homed` (allocated now), `claimed` (it has a home already), `deferred` (until
   * the warm-up gate opens) or `waiting` (no region may take it now).
   */
  freed(shardId: number): 'homed' | 'claimed' | 'deferred' | 'waiting' {
    const { port } = this;
    // Claimed by a registration while it was being handed off (a region that runs it reported to a new
    // coordinator): that home stands, and allocating it again would start a second copy.
    const home = this.options.state.homeOf(shardId);
    if (home !== undefined) {
      this.announce(shardId, home);
      return 'claimed';
    }
    if (!port.gateOpen()) {
      // For the reason GetShardHome waits: a region not heard from yet may run this shard. It is allocated
      // (and announced) once the gate opens.
      port.defer(shardId);
      this.heldFreed.add(shardId);
      return 'deferred';
    }
    const region = port.allocate(shardId);
    if (region === undefined) {
      this.options.logger.info({ shardId }, 'no home for the freed shard; it is allocated once a region may take it');
      this.waiting.add(shardId);
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
    const { typeName } = this.options;
    const region = this.port.allocate(shardId);
    // No home now: the requesters keep their messages buffered (and ask again on their retry tick); the
    // shard is also allocated as soon as a change may give it a home (retryWaiting).
    if (region === undefined) {
      this.waiting.add(shardId, requesters);
      return;
    }
    for (const requester of requesters) this.port.send(requester, { type: 'ShardHome', typeName, shardId, region });
  }

  /**
   * Answers the GetShardHome requests that waited for the warm-up or for an unreachable member, then asks
   * again for the shards without a home (its callers are the changes that may give them one).
   */
  flushDeferred(): void {
    const { state, typeName } = this.options;
    for (const [shardId, requesters] of this.port.takeDeferred()) {
      const freed = this.heldFreed.delete(shardId);
      if (state.isHandingOff(shardId)) continue;
      const home = state.homeOf(shardId);
      // A freed shard's regions asked while it was moving (unanswered then): they all hear of its home.
      if (home === undefined && freed) this.freed(shardId);
      else if (home === undefined) this.allocateAndAnnounce(shardId, requesters);
      else for (const to of requesters) this.port.send(to, { type: 'ShardHome', typeName, shardId, region: home });
    }
    this.retryWaiting();
  }

  /** Asks again for every shard without a home; each one allocated is announced to every region. */
  retryWaiting(): void {
    const { state } = this.options;
    if (this.waiting.size === 0 || !this.port.gateOpen()) return;
    for (const [shardId, requesters] of this.waiting.take()) {
      // Allocated meanwhile (a request, a registration), or moving: nothing left to do here.
      if (state.isHandingOff(shardId) || state.homeOf(shardId) !== undefined) continue;
      const region = this.port.allocate(shardId);
      if (region === undefined) this.waiting.add(shardId, requesters);
      else this.announce(shardId, region);
    }
  }

  private announce(shardId: number, region: string): void {
    this.port.broadcast({ type: 'ShardHome', typeName: this.options.typeName, shardId, region });
  }
}
