// Giving shards without a home one: on request (GetShardHome), after a hand-off, once the warm-up gate opens,
// and again for the shards the strategy had no home for ("no home now": a hard placement rule no candidate
// satisfies, or no candidate at all) whenever something that may change that happens. Those are asked again
// only on such events (membership, registrations, placements, a pin expiring), never on a timer of their
// own, so an unsatisfiable rule costs nothing while nothing changes.
// Each call records what it decides (events, sends) in the dispatcher's Effects.
import type { Logger } from '../../logging.js';
import type { Allocator } from './allocation.js';
import type { Effects } from './effects.js';
import type { HandOffStates } from './hand-off-state.js';
import type { WarmUpGate } from './warm-up-gate.js';

export interface ShardHomesOptions {
  readonly typeName: string;
  readonly logger: Logger;
  /** Chooses homes through the strategy. */
  readonly allocator: Pick<Allocator, 'allocate'>;
  /** Says whether a shard nobody reported may be given a home (`open`). */
  readonly gate: Pick<WarmUpGate, 'open'>;
  /** Entity state in transit: a shard's home decided, a state held for it is moot or its old host let go. */
  readonly states: Pick<HandOffStates, 'started' | 'releaseSource'>;
}

export class ShardHomes {
  constructor(private readonly options: ShardHomesOptions) {}

  /**
   * A registered region reports hosting the shard: a shard without a home gets it, and whoever waited for the
   * shard hears of it; a shard with another home keeps it, and that home is returned (the claimant must learn
   * it and stop its copy).
   */
  claim(fx: Effects, region: string, shardId: number): string | undefined {
    const { state } = fx;
    const before = state.statusOf(shardId);
    fx.apply({ type: 'ShardClaimed', region, shardId });
    const home = state.homeOf(shardId);
    if (before?.kind === 'waiting' && home !== undefined) this.answer(fx, shardId, home, before.requesters);
    return home !== undefined && home !== region ? home : undefined;
  }

  /**
   * A registration's shards (those in range): each claimed (see claim); a shard that runs where claimed has
   * no use for a state held for it here (its start not yet confirmed: restored, or moot). Two regions claiming
   * one shard: the home already known wins, and the news makes the claimant stop its copy.
   */
  claimAll(fx: Effects, region: string, shardIds: ReadonlyArray<number>, numberOfShards: number): void {
    const { typeName, logger, states } = this.options;
    for (const shardId of shardIds) {
      if (shardId >= numberOfShards) continue;
      const home = this.claim(fx, region, shardId);
      if (home === undefined) {
        states.started(fx, shardId);
        continue;
      }
      logger.warn({ shardId, home, claimant: region }, 'shard claimed by two regions');
      fx.send(region, { type: 'ShardHome', typeName, shardId, region: home });
    }
  }

  /**
   * Shards a hand-off freed (stopped, or their owner gone) get homes now (see freed). Claimed by a
   * registration while it was handed off: a state that arrived with the stop is moot. No region may take it
   * (the last ones are leaving, or a rule no member meets): its old host is let go rather than kept until its
   * leave times out; the state waits here for a home.
   */
  freedAll(fx: Effects, shardIds: ReadonlyArray<number>): void {
    const { states } = this.options;
    for (const shardId of shardIds) {
      const outcome = this.freed(fx, shardId);
      if (outcome === 'claimed') states.started(fx, shardId);
      else if (outcome === 'waiting') states.releaseSource(fx, shardId);
    }
  }

  /**
   * A registered region runs a shard that has no home and no hand-off: it becomes the home, as a registration
   * would make it. Not while the warm-up gate holds the shard: a region not heard from yet may run it too.
   */
  adopt(fx: Effects, region: string, shardId: number): void {
    const { state } = fx;
    const before = state.statusOf(shardId);
    const waiting = before?.kind === 'waiting' && before.reason === 'no-home' ? before : undefined;
    if ((before !== undefined && waiting === undefined) || !state.isRegion(region)) return;
    fx.apply({ type: 'ShardAdopted', region, shardId });
    if (waiting !== undefined) this.answer(fx, shardId, region, waiting.requesters);
  }

  /** Holds a shard's allocation (and its requester's answer) until the warm-up gate opens. */
  defer(fx: Effects, shardId: number, requester?: string): void {
    fx.apply({ type: 'ShardDeferred', shardId, ...(requester === undefined ? {} : { requester }) });
  }

  /**
   * A hand-off ended with the shard stopped (or its owner removed): allocated again at once, every region learns
   * where. Says what became of it: `homed` (allocated now), `claimed` (it has a home already), `deferred` (until
   * the warm-up gate opens) or `waiting` (no region may take it now).
   */
  freed(fx: Effects, shardId: number): 'homed' | 'claimed' | 'deferred' | 'waiting' {
    const { state } = fx;
    // Claimed by a registration while it was being handed off (a region that runs it reported to a new
    // coordinator): that home stands, and allocating it again would start a second copy.
    const home = state.homeOf(shardId);
    if (home !== undefined) {
      this.announce(fx, shardId, home);
      return 'claimed';
    }
    if (!this.options.gate.open) {
      // For the reason GetShardHome waits: a region not heard from yet may run this shard. It is allocated
      // (and announced) once the gate opens.
      fx.apply({ type: 'ShardDeferred', shardId, freed: true });
      return 'deferred';
    }
    const region = this.options.allocator.allocate(fx, shardId);
    if (region === undefined) {
      this.options.logger.info({ shardId }, 'no home for the freed shard; it is allocated once a region may take it');
      fx.apply({ type: 'ShardWaiting', shardId, requesters: [] });
      return 'waiting';
    }
    this.announce(fx, shardId, region);
    return 'homed';
  }

  /**
   * A removed region's shards that no hand-off frees (no margin ran for it, or their hand-off timed out and
   * left them there): each is given a home now, in this one round, as a freed shard is, so the regions'
   * buffered messages go on the announcement instead of waiting for each shard's next request.
   */
  rehome(fx: Effects, shardIds: Iterable<number>): void {
    const { state } = fx;
    for (const shardId of shardIds)
      if (state.homeOf(shardId) === undefined && !state.isHandingOff(shardId)) this.freed(fx, shardId);
  }

  allocateAndAnnounce(fx: Effects, shardId: number, requesters: Iterable<string>): void {
    const region = this.options.allocator.allocate(fx, shardId);
    // No home now: the requesters keep their messages buffered (and ask again on their retry tick); the
    // shard is also allocated as soon as a change may give it a home (retryWaiting).
    if (region === undefined) {
      fx.apply({ type: 'ShardWaiting', shardId, requesters });
      return;
    }
    this.answer(fx, shardId, region, requesters);
  }

  /**
   * Answers the GetShardHome requests that waited for the warm-up or for an unreachable member, then asks
   * again for the shards without a home (its callers are the changes that may give them one).
   */
  flushDeferred(fx: Effects): void {
    if (!this.options.gate.open) return;
    for (const [shardId, { freed, requesters }] of fx.state.waiting('warm-up')) {
      // A freed shard's regions asked while it was moving (unanswered then): they all hear of its home.
      if (freed) this.freed(fx, shardId);
      else this.allocateAndAnnounce(fx, shardId, requesters);
    }
    this.retryWaiting(fx);
  }

  /** Asks again for every shard without a home; each one allocated is announced to every region. */
  retryWaiting(fx: Effects): void {
    const { state } = fx;
    if (state.counts.waiting === 0 || !this.options.gate.open) return;
    for (const [shardId] of state.waiting('no-home')) {
      const region = this.options.allocator.allocate(fx, shardId);
      if (region !== undefined) this.announce(fx, shardId, region);
    }
  }

  private answer(fx: Effects, shardId: number, region: string, requesters: Iterable<string>): void {
    const { typeName } = this.options;
    for (const requester of requesters) fx.send(requester, { type: 'ShardHome', typeName, shardId, region });
  }

  private announce(fx: Effects, shardId: number, region: string): void {
    fx.broadcast({ type: 'ShardHome', typeName: this.options.typeName, shardId, region });
  }
}
