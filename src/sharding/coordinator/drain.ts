// Draining a region: the coordinator treats it as cordoned and hands off every shard it hosts; each shard is
// then allocated through the strategy among the other candidates, the way any hand-off ends. The answer
// names every move with the home the strategy picks now (the actual home is decided when the shard stopped,
// by the same strategy over the same candidates). Answered once per request id, however often re-sent.
import type { NodeAddress } from '../../cluster/address.js';
import type { CordonRecord, CordonView } from '../placements/cordon-view.js';
import type { DrainMove, ShardingMessage } from '../protocol/messages.js';
import type { AllocationStrategy } from '../strategies/index.js';
import { chooseHome } from './allocation.js';
import { AnswerCache } from './answer-cache.js';
import type { RequestPort, RoomBasics } from './ports.js';

/** How long a drained region stays excluded here while the cordon has not replicated to this node yet. */
export const DRAIN_EXCLUSION_MS = 30_000;
const REMEMBERED_ANSWERS = 64;

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

export interface DrainRequestsOptions extends RoomBasics {
  readonly strategy: AllocationStrategy;
  /** The cordons the Allocator honours too: a drained region is excluded here at once. */
  readonly cordons: CoordinatorCordons;
}

/** Where a drain's calls go (wired in rooms.ts). */
export interface DrainRequestsPort extends RequestPort {
  /** Who may get shards now, the drained region excluded once cordoned (Allocator.candidates). */
  candidates(): NodeAddress[];
}

export class DrainRequests {
  private readonly answers = new AnswerCache<ShardingMessage>(REMEMBERED_ANSWERS);

  constructor(
    private readonly options: DrainRequestsOptions,
    private readonly port: DrainRequestsPort,
  ) {}

  drain(from: string, requestId: number, region: string): void {
    this.port.whenWarm(() => this.answer(from, requestId, region));
  }

  private answer(from: string, requestId: number, region: string): void {
    const { typeName, strategy, state, cordons, logger } = this.options;
    const earlier = this.answers.get(from, requestId);
    if (earlier !== undefined) {
      this.port.send(from, earlier);
      return;
    }
    cordons.exclude(region);
    const shardIds = state.shardsOf(region).sort((a, b) => a - b);
    const others = this.port.candidates();
    let answer: ShardingMessage;
    if (shardIds.length > 0 && others.length === 0) {
      logger.warn({ region, shards: shardIds.length }, 'drain refused: no other region may take the shards');
      answer = { type: 'DrainStarted', typeName, requestId, moves: [], noCapacity: true };
    } else {
      const moves = planDrain(strategy, region, shardIds, others, state.shardMap());
      for (const { shardId } of moves) this.port.handOff(shardId, 'drain');
      logger.info({ region, shards: moves.length, from }, 'draining region: its shards are handed off');
      answer = { type: 'DrainStarted', typeName, requestId, moves, noCapacity: false };
    }
    this.answers.remember(from, requestId, answer);
    this.port.send(from, answer);
  }
}
