// Asking the strategy: who may get shards (the candidates), where one shard goes (with the strategy's answer
// checked, and the least-loaded candidate when it is not a candidate or the strategy throws), and which
// shards a rebalance round moves. Plain functions, and the Allocator that records a choice and sends
// HostShard (into the dispatcher's Effects). Then ShardHomes, every path that asks it: a request, a hand-off's
// end, the gate opening, and the shards that had no home (each section below says what it is for).
import { NodeAddress } from '../../cluster/address.js';
import type { MemberInfo } from '../../cluster/member.js';
import { NO_CORDONS, type CordonView } from '../placements/cordon-view.js';
import { describe } from '../core/describe.js';
import type { AllocationStrategy } from '../strategies/index.js';
import { hasRole, type WarmUpGate } from './membership.js';
import type { Logger } from '../../logging.js';
import type { Effects } from './effects.js';
import type { HandOffStates } from './hand-off-states.js';
import type { CoordinatorState } from './state.js';

export interface CandidateFilter {
  isRegion(address: string): boolean;
  isShuttingDown(address: string): boolean;
}

/**
 * Registered, non-proxy regions on Up members with the type's role that are not leaving and not cordoned.
 * Allocation and rebalance both ask only these, so a cordoned region gets nothing new and no rebalance
 * target is ever a cordoned one; its current shards are not candidates' shards either, so a rebalance
 * neither counts nor moves them (a cordoned node keeps serving them until drained).
 */
export function allocationCandidates(
  members: ReadonlyArray<MemberInfo>,
  role: string | undefined,
  registry: CandidateFilter,
  cordons: CordonView = NO_CORDONS,
): NodeAddress[] {
  const result: NodeAddress[] = [];
  for (const member of members) {
    const key = member.address.toString();
    if (member.status !== 'up' || !registry.isRegion(key) || registry.isShuttingDown(key)) continue;
    if (cordons.isCordoned(key)) continue;
    if (!hasRole(member, role)) continue;
    result.push(member.address);
  }
  return result;
}

export interface HomeChoice {
  readonly region: string;
  /** Set when the strategy's answer was replaced: what was wrong with it. */
  readonly problem: string | undefined;
}

/**
 * The strategy's home for a shard. Undefined when there is no candidate, or when the strategy answers
 * undefined: "no home now" (a hard placement rule no candidate satisfies). Any other result that is not a
 * current candidate (or a strategy that throws) is a bug in the strategy; it is replaced by the candidate
 * with the fewest shards, because a bug must never leave a shard without a home while candidates exist.
 * `shards` is handed to the strategy as it is: pass a copy the coordinator does not read again
 * (CoordinatorState.shardMapSnapshot, or a dry run's own simulation).
 */
export function chooseHome(
  strategy: AllocationStrategy,
  shardId: number,
  candidates: ReadonlyArray<NodeAddress>,
  shards: ReadonlyMap<string, ReadonlySet<number>>,
): HomeChoice | undefined {
  if (candidates.length === 0) return undefined;
  const keys = new Set(candidates.map((address) => address.toString()));
  let problem: string;
  try {
    const result: unknown = strategy.allocate(shardId, candidates, shards);
    if (result === undefined) return undefined;
    const key = result instanceof NodeAddress ? result.toString() : typeof result === 'string' ? result : undefined;
    if (key !== undefined && keys.has(key)) return { region: key, problem: undefined };
    problem = `returned ${describe(result)}, which is not a current candidate`;
  } catch (error) {
    problem = `threw: ${error instanceof Error ? error.message : String(error)}`;
  }
  return { region: leastLoaded(candidates, shards), problem };
}

/** The candidate with the fewest shards; ties go to the lowest address. `candidates` must not be empty. */
export function leastLoaded(
  candidates: ReadonlyArray<NodeAddress>,
  shards: ReadonlyMap<string, ReadonlySet<number>>,
): string {
  let best: string | undefined;
  let bestCount = Infinity;
  for (const address of candidates) {
    const key = address.toString();
    const count = shards.get(key)?.size ?? 0;
    if (count < bestCount || (count === bestCount && best !== undefined && key < best)) {
      best = key;
      bestCount = count;
    }
  }
  if (best === undefined) throw new RangeError('leastLoaded needs at least one candidate');
  return best;
}

/** The shards the strategy wants moved, or the error it threw. */
export function shardsToMove(
  strategy: AllocationStrategy,
  candidates: ReadonlyArray<NodeAddress>,
  shards: ReadonlyMap<string, ReadonlySet<number>>,
  inProgress: ReadonlySet<number>,
): { readonly shards: ReadonlySet<number> } | { readonly error: string } {
  try {
    return { shards: strategy.rebalance(shards, candidates, new Set(inProgress)) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

export interface AllocatorOptions {
  readonly typeName: string;
  /** The coordinator's state, read for candidates and the shard map (changed only through Effects). */
  readonly state: CoordinatorState;
  readonly logger: Logger;
  /** The cluster's members as this node sees them now (ShardingContext.membership). */
  readonly members: () => ReadonlyArray<MemberInfo>;
  readonly role: string | undefined;
  readonly strategy: AllocationStrategy;
  /** Entity state in transit: a moved shard's state goes to its new home ahead of its HostShard, or it names it. */
  readonly states: Pick<HandOffStates, 'before'>;
  /** Regions that take nothing new; default NO_CORDONS. */
  readonly cordons?: CordonView;
}

/** Gives shards homes through the strategy, and counts how often the strategy had to be overruled. */
export class Allocator {
  private readonly counts = { allocations: 0, invalidAllocations: 0 };
  /** Shards whose HostShard was unanswered at the last retry tick: only they are sent it again. */
  private startsPendingAtLastTick = new Set<number>();

  constructor(private readonly options: AllocatorOptions) {}

  get counters(): { readonly allocations: number; readonly invalidAllocations: number } {
    return { ...this.counts };
  }

  candidates(): NodeAddress[] {
    const { role, state, cordons, members } = this.options;
    return allocationCandidates(members(), role, state, cordons);
  }

  /** Whether `region` is one of the candidates now (see allocationCandidates). */
  isCandidate(region: string): boolean {
    return this.candidates().some((address) => address.toString() === region);
  }

  /**
   * The home the strategy gives the shard once its owner let go of it (the shard not counted as the owner's), if
   * that is another region: where a hand-off's state may go straight from the old host. Undefined when the
   * strategy keeps it on the owner, has no home for it or fails (allocate reports that when it happens).
   */
  likelyHome(shardId: number, owner: string): string | undefined {
    const shards = new Map(this.options.state.shardMapSnapshot());
    const owned = shards.get(owner);
    if (owned?.has(shardId)) shards.set(owner, new Set([...owned].filter((id) => id !== shardId)));
    const choice = chooseHome(this.options.strategy, shardId, this.candidates(), shards);
    return choice === undefined || choice.problem !== undefined || choice.region === owner ? undefined : choice.region;
  }

  /**
   * Chooses a home (see chooseHome), records it and tells the region to host the shard. Undefined when the
   * shard has no home now (no candidate, or the strategy allows none of them).
   */
  allocate(fx: Effects, shardId: number): string | undefined {
    const { strategy, state, logger, typeName } = this.options;
    const candidates = this.candidates();
    const choice = chooseHome(strategy, shardId, candidates, state.shardMapSnapshot());
    if (choice === undefined) {
      if (candidates.length > 0)
        logger.debug(
          { shardId, candidates: candidates.length },
          'no home now: the strategy allows none of the candidates',
        );
      return undefined;
    }
    const { region, problem } = choice;
    if (problem !== undefined) {
      this.counts.invalidAllocations++;
      logger.error(
        { shardId, candidates: candidates.map(String), fallback: region },
        `allocation strategy ${problem}; using a candidate instead`,
      );
    }
    this.counts.allocations++;
    fx.apply({ type: 'ShardAllocated', shardId, region });
    this.host(fx, region, shardId);
    logger.debug({ shardId, region }, 'shard allocated');
    return region;
  }

  /** The shards the strategy wants moved now; none without candidates, allocated shards, or if it throws. */
  shardsToRebalance(): ReadonlySet<number> {
    const { strategy, state, logger } = this.options;
    const candidates = this.candidates();
    if (candidates.length === 0 || state.counts.allocatedShards === 0) return new Set();
    const chosen = shardsToMove(strategy, candidates, state.shardMapSnapshot(), new Set(state.handingOff()));
    if ('shards' in chosen) return chosen.shards;
    logger.error({ err: chosen.error }, 'allocation strategy rebalance threw');
    return new Set();
  }

  /**
   * Tells `region` to host the shard (again, on the retry tick: `resend`). A moved shard's state goes first, on
   * the same connection, so the new home restores before it starts; or it came straight from the old host, and
   * the HostShard names that transfer.
   */
  private host(fx: Effects, region: string, shardId: number, resend = false): void {
    const { chunks, transferId } = this.options.states.before(fx, region, shardId, resend);
    for (const chunk of chunks) fx.send(region, chunk);
    const named = transferId === undefined ? {} : { transferId };
    fx.send(region, { type: 'HostShard', typeName: this.options.typeName, shardId, ...named });
  }

  /**
   * The retry tick: a HostShard still unanswered is sent again once it had one whole interval: one sent just
   * before this tick is most likely in flight, and sending it again would send its shard's state twice.
   */
  resendStarts(fx: Effects): void {
    const pending = fx.state.pendingStarts();
    for (const [shardId, region] of pending)
      if (this.startsPendingAtLastTick.has(shardId)) this.host(fx, region, shardId, true);
    this.startsPendingAtLastTick = new Set(pending.map(([shardId]) => shardId));
  }

  /**
   * Arms the timer for the strategy's next change by time alone (a pin expiring: see
   * AllocationStrategy.nextChangeInMs), so an expiry takes effect at that moment and not at the next tick;
   * nothing when it has none. A later change than setTimeout allows is waited for in steps (an early wake-up
   * only re-checks).
   */
  scheduleChange(fx: Effects): void {
    const { strategy, logger } = this.options;
    if (typeof strategy.nextChangeInMs !== 'function') return;
    let delay: number | undefined;
    try {
      delay = strategy.nextChangeInMs();
    } catch (error) {
      logger.error(
        { err: error instanceof Error ? error.message : String(error) },
        'allocation strategy nextChangeInMs threw',
      );
      return fx.cancelTimer(CHANGE_TIMER);
    }
    // Anything but a positive finite delay is no change ahead: a zero or negative one would spin.
    if (delay === undefined || typeof delay !== 'number' || !(delay > 0) || !Number.isFinite(delay))
      return fx.cancelTimer(CHANGE_TIMER);
    fx.startTimer(CHANGE_TIMER, Math.min(Math.ceil(delay), MAX_DELAY_MS), { type: 'placement-change' });
  }
}

/** The key of the strategy's next change among the dispatcher's timers. */
const CHANGE_TIMER = 'placement-change';
// setTimeout's longest delay.
const MAX_DELAY_MS = 2_147_483_647;

// Giving shards without a home one: on request (GetShardHome), after a hand-off, once the warm-up gate opens,
// and again for the shards the strategy had no home for ("no home now": a hard placement rule no candidate
// satisfies, or no candidate at all) whenever something that may change that happens. Those are asked again
// only on such events (membership, registrations, placements, a pin expiring), never on a timer of their
// own, so an unsatisfiable rule costs nothing while nothing changes.
// Each call records what it decides (events, sends) in the dispatcher's Effects.

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
