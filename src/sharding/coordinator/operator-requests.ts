// Operator requests to the coordinator, each answered from the full map (the dispatcher runs them once it is
// warm): shard locations, moving named shards now (RebalanceNow), and draining a region (it is treated as
// cordoned and every shard it hosts is handed off; each is then allocated through the strategy among the
// other candidates, the way any hand-off ends). RebalanceNow and drains are answered once per request id,
// however often re-sent: a repeat whose answer was lost gets the same answer, not a second execution. A
// drain's answer names every move with the home the strategy picks now (the actual home is decided when the
// shard stopped, by the same strategy over the same candidates). Each call records into the dispatch's Effects.
import type { NodeAddress } from '../../cluster/address.js';
import type { Logger } from '../../logging.js';
import type { CordonRecord, CordonView } from '../placements/cordon-view.js';
import type { DrainMove, ShardingMessage } from '../protocol/messages.js';
import type { AllocationStrategy } from '../strategies/index.js';
import { chooseHome, type Allocator } from './allocation.js';
import type { Effects } from './effects.js';
import type { HandOffs } from './hand-offs.js';
import type { CoordinatorState } from './state.js';

/** How long a drained region stays excluded here while the cordon has not replicated to this node yet. */
export const DRAIN_EXCLUSION_MS = 30_000;
/** How many RebalanceNow answers are kept for repeated requests. */
const REMEMBERED_ANSWERS = 256;
const REMEMBERED_DRAINS = 64;

/** How RebalanceNow sorts the shards it is asked to move. */
export interface RebalanceNowVerdict {
  /** Moving now (or already moving). */
  readonly accepted: number[];
  /** Not a shard id of this type. */
  readonly unknown: number[];
  /** No home to move from. */
  readonly unallocated: number[];
  /** The accepted shards that need a new hand-off. */
  readonly toHandOff: number[];
}

/** Sorts the requested shard ids (each once, in request order); pure. */
export function judgeRebalanceNow(
  shardIds: ReadonlyArray<number>,
  numberOfShards: number,
  state: Pick<CoordinatorState, 'isHandingOff' | 'homeOf'>,
): RebalanceNowVerdict {
  const verdict: RebalanceNowVerdict = { accepted: [], unknown: [], unallocated: [], toHandOff: [] };
  for (const shardId of new Set(shardIds)) {
    if (!Number.isInteger(shardId) || shardId < 0 || shardId >= numberOfShards) verdict.unknown.push(shardId);
    else if (state.isHandingOff(shardId)) verdict.accepted.push(shardId);
    else if (state.homeOf(shardId) === undefined) verdict.unallocated.push(shardId);
    else {
      verdict.toHandOff.push(shardId);
      verdict.accepted.push(shardId);
    }
  }
  return verdict;
}

export interface OperatorRequestsOptions {
  readonly typeName: string;
  readonly numberOfShards: number;
  readonly strategy: AllocationStrategy;
  readonly logger: Logger;
  /** The cordons the Allocator honours too: a drained region is excluded here at once. */
  readonly cordons: CoordinatorCordons;
  /** Starts the hand-offs a request asks for. */
  readonly handOffs: Pick<HandOffs, 'begin'>;
  /** Who may get shards now (the drained region excluded once cordoned). */
  readonly allocator: Pick<Allocator, 'candidates'>;
}

export class OperatorRequests {
  private readonly rebalanceAnswers = new AnswerCache<ShardingMessage>(REMEMBERED_ANSWERS);
  private readonly drainAnswers = new AnswerCache<ShardingMessage>(REMEMBERED_DRAINS);

  constructor(private readonly options: OperatorRequestsOptions) {}

  shardLocations(fx: Effects, from: string, requestId: number): void {
    const { state } = fx;
    const regions = state.locations();
    fx.send(from, {
      type: 'ShardLocations',
      typeName: this.options.typeName,
      requestId,
      regions,
      handingOff: state.handingOff(),
    });
  }

  rebalanceNow(fx: Effects, from: string, requestId: number, shardIds: ReadonlyArray<number>): void {
    const { typeName, numberOfShards, logger, handOffs } = this.options;
    const earlier = this.rebalanceAnswers.get(from, requestId);
    if (earlier !== undefined) return fx.send(from, earlier);
    const { accepted, unknown, unallocated, toHandOff } = judgeRebalanceNow(shardIds, numberOfShards, fx.state);
    for (const shardId of toHandOff) handOffs.begin(fx, shardId, 'manual');
    logger.info({ accepted, unknown, unallocated, from }, 'manual rebalance');
    // The wire field keeps its old name for peers of earlier releases.
    const answer: ShardingMessage = {
      type: 'RebalanceNowResult',
      typeName,
      requestId,
      accepted,
      unknown,
      homeless: unallocated,
    };
    this.rebalanceAnswers.remember(from, requestId, answer);
    fx.send(from, answer);
  }

  drain(fx: Effects, from: string, requestId: number, region: string): void {
    const { typeName, strategy, cordons, logger, handOffs, allocator } = this.options;
    const earlier = this.drainAnswers.get(from, requestId);
    if (earlier !== undefined) return fx.send(from, earlier);
    cordons.exclude(region);
    const shardIds = fx.state.shardsOf(region).sort((a, b) => a - b);
    const others = allocator.candidates();
    let answer: ShardingMessage;
    if (shardIds.length > 0 && others.length === 0) {
      logger.warn({ region, shards: shardIds.length }, 'drain refused: no other region may take the shards');
      answer = { type: 'DrainStarted', typeName, requestId, moves: [], noCapacity: true };
    } else {
      const moves = planDrain(strategy, region, shardIds, others, fx.state.shardMap());
      for (const { shardId } of moves) handOffs.begin(fx, shardId, 'drain');
      logger.info({ region, shards: moves.length, from }, 'draining region: its shards are handed off');
      answer = { type: 'DrainStarted', typeName, requestId, moves, noCapacity: false };
    }
    this.drainAnswers.remember(from, requestId, answer);
    fx.send(from, answer);
  }
}

/**
 * The cordons this coordinator honours: the store's view, plus regions named by a drain request whose
 * cordon has not reached this node's replica yet (it is written on the node that took the request, and a
 * shard freed meanwhile must not go back to the region it is leaving). Such an exclusion ends once the
 * store shows the cordon (from then on the store decides, uncordon included) or after DRAIN_EXCLUSION_MS.
 */
export class CoordinatorCordons implements CordonView {
  private readonly pending = new Map<string, number>();

  constructor(
    private readonly view: CordonView,
    private readonly now: () => number,
  ) {}

  /** Excludes `address` until the store shows its cordon (or the exclusion lapses). */
  exclude(address: string): void {
    if (!this.view.isCordoned(address)) this.pending.set(address, this.now() + DRAIN_EXCLUSION_MS);
  }

  isCordoned(address: string): boolean {
    if (this.view.isCordoned(address)) {
      this.pending.delete(address);
      return true;
    }
    const until = this.pending.get(address);
    if (until === undefined) return false;
    if (this.now() < until) return true;
    this.pending.delete(address);
    return false;
  }

  list(): readonly CordonRecord[] {
    const listed = this.view.list();
    const known = new Set(listed.map((record) => record.address));
    const pending = [...this.pending.keys()].filter((address) => !known.has(address) && this.isCordoned(address));
    return [...listed, ...pending.map((address) => ({ address }))];
  }
}

/**
 * The moves a drain of `region` starts: each of its shards in turn, with the strategy's home among
 * `candidates` given the homes chosen before it (so they spread as the hand-offs will). Pure apart from
 * what the strategy itself does (an external strategy may log a warning for a pin it cannot honour).
 */
export function planDrain(
  strategy: AllocationStrategy,
  region: string,
  shardIds: ReadonlyArray<number>,
  candidates: ReadonlyArray<NodeAddress>,
  shards: ReadonlyMap<string, ReadonlySet<number>>,
): DrainMove[] {
  const simulated = new Map([...shards].map(([key, owned]) => [key, new Set(owned)]));
  const moves: DrainMove[] = [];
  for (const shardId of shardIds) {
    simulated.get(region)?.delete(shardId);
    const choice = chooseHome(strategy, shardId, candidates, simulated);
    if (choice !== undefined) {
      let owned = simulated.get(choice.region);
      if (owned === undefined) simulated.set(choice.region, (owned = new Set()));
      owned.add(shardId);
    }
    moves.push({ shardId, from: region, to: choice?.region ?? null });
  }
  return moves;
}

/** Remembered answers by requester and request id, the oldest forgotten beyond the capacity. */
export class AnswerCache<T> {
  /** Insertion order is age order: the first key is the oldest. */
  private readonly answers = new Map<string, T>();

  constructor(private readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1)
      throw new RangeError(`answer cache capacity must be a positive integer, got ${capacity}`);
  }

  get size(): number {
    return this.answers.size;
  }

  get(requester: string, requestId: number): T | undefined {
    return this.answers.get(key(requester, requestId));
  }

  /** Keeps the answer, forgetting the oldest one beyond the capacity. */
  remember(requester: string, requestId: number, answer: T): void {
    this.answers.set(key(requester, requestId), answer);
    if (this.answers.size > this.capacity) {
      const oldest = this.answers.keys().next().value;
      if (oldest !== undefined) this.answers.delete(oldest);
    }
  }
}

function key(requester: string, requestId: number): string {
  return `${requester}#${requestId}`;
}
