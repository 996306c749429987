// External allocation: explicit placements (operator pins read from the replicated store's snapshot) decide
// a shard's home; every other shard is the fallback strategy's. A pin names a node address or a selector
// over node attributes and roles (placement-target.ts). A `prefer` pin (the default) never leaves a shard
// homeless: when no allowed node can take it, the fallback places it among the reachable nodes and a
// warning is logged. A `require` pin is a hard constraint: no allowed node, no home (allocate answers
// undefined) until one is available. An expired pin steers nothing.
import type { NodeAddress } from '../../cluster/address.js';
import type { ClusterView } from '../../cluster/member.js';
import { ActorTsError } from '../../errors.js';
import {
  isAllocationStrategy,
  requireCandidates,
  requireShardId,
  type AllocationStrategy,
  type ShardAllocations,
} from './allocation-strategy.js';
import { WarningLog, type WarningSink } from './external-warnings.js';
import type { PinAwareStrategy, PinContext } from './pin-aware.js';
import { PlacementPin, activePin, type ExternalAllocationState, type PinLike } from '../placements/placement-pin.js';
import {
  homeMatches,
  matchingCandidates,
  problemOf,
  reachablePool,
  readView,
  type ClusterReading,
} from './pin-matching.js';

export type { PlacementProblem } from './pin-matching.js';

/** Options of externalAllocationStrategy. */
export interface ExternalAllocationOptions {
  /** Reachability and member facts (roles, attributes); without it every candidate counts as reachable and no selector matches. */
  readonly cluster?: ClusterView;
  /** Called when a pin cannot be honoured; see `WarningLog` for when it repeats. Defaults to silence. */
  readonly onWarning?: WarningSink;
  /** The clock pins expire by (epoch ms); the coordinator's scheduler must read the same one. Default Date.now. */
  readonly now?: () => number;
}

/**
 * Allocation that honours operator pins: a pinned shard goes to its target (a node or a selector), every other shard
 * is `fallback`'s. A `prefer` pin never leaves a shard homeless; a `require` pin with no allowed node answers
 * undefined (no home now) until one is available. Rebalance moves shards onto their pins.
 */
export function externalAllocationStrategy(
  fallback: AllocationStrategy,
  getState: () => ExternalAllocationState,
  options: ExternalAllocationOptions = {},
): AllocationStrategy {
  if (!isAllocationStrategy(fallback)) {
    throw new ActorTsError('invalid_argument', 'externalAllocationStrategy needs a fallback AllocationStrategy');
  }
  if (typeof getState !== 'function') {
    throw new ActorTsError('invalid_argument', 'externalAllocationStrategy needs a getState function');
  }
  if (options.onWarning !== undefined && typeof options.onWarning !== 'function') {
    throw new ActorTsError('invalid_argument', 'onWarning must be a function');
  }
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw new ActorTsError('invalid_argument', 'now must be a function returning epoch milliseconds');
  }
  return new ExternalAllocationStrategy(
    fallback,
    getState,
    options.cluster,
    new WarningLog(options.onWarning),
    options.now ?? Date.now,
  );
}

class ExternalAllocationStrategy implements PinAwareStrategy {
  // Sorted expiries per pin map, so nextChangeAt costs a scan only once per placement change.
  private expiries: { readonly pins: ReadonlyMap<number, PinLike>; readonly sorted: readonly number[] } | undefined;

  constructor(
    private readonly fallback: AllocationStrategy,
    private readonly getState: () => ExternalAllocationState,
    private readonly cluster: ClusterView | undefined,
    private readonly warnings: WarningLog,
    private readonly now: () => number,
  ) {}

  allocate(
    shardId: number,
    candidates: ReadonlyArray<NodeAddress>,
    currentShards: ShardAllocations,
  ): NodeAddress | undefined {
    requireShardId(shardId);
    requireCandidates(candidates);
    const pin = activePin(this.getState().explicitPlacements.get(shardId), this.now());
    const view = readView(this.cluster);
    if (pin === undefined) {
      this.warnings.forget(shardId);
      return this.fallbackChoice(shardId, reachablePool(candidates, view), currentShards);
    }
    const matching = matchingCandidates(pin, candidates, view);
    if (matching.length > 0) {
      this.warnings.forget(shardId);
      // Several allowed nodes: the fallback spreads the pinned shards over them as it would over all nodes.
      return matching.length === 1 ? matching[0] : this.fallbackChoice(shardId, matching, currentShards);
    }
    const target = pin.toString();
    const keys = new Set(candidates.map(String));
    const problem = problemOf(pin, (key) => keys.has(key));
    if (pin.mode === 'require') {
      this.warnings.report(
        shardId,
        target,
        problem,
        `shard ${shardId}: required target ${target} is ${describeProblem(problem)}; the shard waits without a home`,
        {
          mode: pin.mode,
        },
      );
      return undefined;
    }
    const choice = this.fallbackChoice(shardId, reachablePool(candidates, view), currentShards);
    this.warnings.report(
      shardId,
      target,
      problem,
      `shard ${shardId}: explicit target ${target} is ${describeProblem(problem)}; allocated to ${String(choice)} by the fallback strategy`,
      { mode: pin.mode, allocatedTo: choice === undefined ? null : choice.toString() },
    );
    return choice;
  }

  /**
   * O(allocated shards + candidates + members), plus one fallback call per selector with shards on
   * several allowed nodes. A pinned shard on an allowed node stays, except to even out the allowed nodes the
   * way the fallback would; one on a node the pin does not allow moves when an allowed node is available,
   * and a `require` pin hands it off even when none is.
   */
  rebalance(
    currentShards: ShardAllocations,
    candidates: ReadonlyArray<NodeAddress>,
    rebalanceInProgress: ReadonlySet<number>,
  ): ReadonlySet<number> {
    const pins = this.getState().explicitPlacements;
    const now = this.now();
    const view = readView(this.cluster);
    const candidateKeys = new Set(candidates.map(String));
    const moves = new Set<number>();
    // Selector pins honoured where they are, by canonical target: evened out over their allowed nodes below.
    const groups = new Map<string, { readonly pin: PlacementPin; readonly shards: Set<number> }>();
    // Regions holding pinned shards, re-ordered for the fallback (see below).
    let fallbackView: Map<string, ReadonlySet<number>> | undefined;

    for (const [home, shards] of currentShards) {
      let pinnedHere: number[] | undefined;
      for (const shardId of shards) {
        const pin = activePin(pins.get(shardId), now);
        if (pin === undefined) continue;
        (pinnedHere ??= []).push(shardId);
        if (rebalanceInProgress.has(shardId)) continue;
        if (homeMatches(pin, home, view)) {
          this.warnings.forget(shardId);
          if (pin.target.kind === 'selector') {
            const key = pin.toString();
            let group = groups.get(key);
            if (group === undefined) groups.set(key, (group = { pin, shards: new Set() }));
            group.shards.add(shardId);
          }
          continue;
        }
        this.rebalanceMisplaced(shardId, pin, home, candidates, candidateKeys, view, moves);
      }
      if (pinnedHere !== undefined) {
        // Pinned shards still count as load (the fallback's allocate counts them too, and a mismatch would
        // bounce shards back and forth), but they are shown to the fallback as the youngest, so its
        // oldest-first picks land on shards that may actually move.
        (fallbackView ??= new Map(currentShards)).set(home, youngestLast(shards, new Set(pinnedHere)));
      }
    }
    this.warnings.prune((shardId) => activePin(pins.get(shardId), now)?.toString());
    for (const { pin, shards } of groups.values())
      this.evenOut(pin, shards, currentShards, candidates, rebalanceInProgress, view, moves);

    const suggestions = this.fallback.rebalance(
      fallbackView ?? currentShards,
      reachablePool(candidates, view),
      rebalanceInProgress,
    );
    for (const shardId of suggestions) {
      if (activePin(pins.get(shardId), now) === undefined && !rebalanceInProgress.has(shardId)) moves.add(shardId);
    }
    return moves;
  }

  /** The fallback's reason, over the pool it places in: pins are explain's own part of the answer. */
  reasonFor(
    shardId: number,
    home: string,
    candidates: ReadonlyArray<NodeAddress>,
    currentShards: ShardAllocations,
  ): string | undefined {
    if (this.fallback.reasonFor === undefined) return undefined;
    const pool = reachablePool(candidates, readView(this.cluster));
    return this.fallback.reasonFor(shardId, home, pool, currentShards);
  }

  pinContext(): PinContext {
    return { pins: this.getState().explicitPlacements, view: readView(this.cluster), now: this.now() };
  }

  withPins(pins: ReadonlyMap<number, PinLike>, onWarning: WarningSink): AllocationStrategy {
    const state: ExternalAllocationState = { explicitPlacements: pins };
    return new ExternalAllocationStrategy(
      this.fallback,
      () => state,
      this.cluster,
      new WarningLog(onWarning),
      this.now,
    );
  }

  /** Time until the earliest expiry still ahead; undefined when no pin will expire. */
  nextChangeInMs(): number | undefined {
    const pins = this.getState().explicitPlacements;
    if (this.expiries?.pins !== pins) {
      const sorted: number[] = [];
      for (const value of pins.values()) {
        if (value instanceof PlacementPin && value.expiresAt !== null) sorted.push(value.expiresAt);
      }
      this.expiries = { pins, sorted: sorted.sort((a, b) => a - b) };
    }
    const now = this.now();
    const next = this.expiries.sorted.find((at) => at > now);
    return next === undefined ? undefined : next - now;
  }

  /** A pinned shard on a node its pin does not allow. */
  private rebalanceMisplaced(
    shardId: number,
    pin: PlacementPin,
    home: string,
    candidates: ReadonlyArray<NodeAddress>,
    candidateKeys: ReadonlySet<string>,
    view: ClusterReading,
    moves: Set<number>,
  ): void {
    const target = pin.toString();
    if (matchingCandidates(pin, candidates, view).length > 0) {
      this.warnings.forget(shardId);
      moves.add(shardId);
      return;
    }
    const problem = problemOf(pin, (key) => candidateKeys.has(key));
    if (pin.mode === 'require') {
      moves.add(shardId);
      this.warnings.report(
        shardId,
        target,
        problem,
        `shard ${shardId}: required target ${target} is ${describeProblem(problem)}; handing the shard off from ${home}, it waits without a home`,
        { mode: pin.mode, handedOffFrom: home },
      );
      return;
    }
    this.warnings.report(
      shardId,
      target,
      problem,
      `shard ${shardId}: explicit target ${target} is ${describeProblem(problem)}; the shard stays on ${home}`,
      { mode: pin.mode, stayingOn: home },
    );
  }

  /**
   * The shards of one selector over its allowed nodes: the fallback's rebalance of just those nodes, with
   * the selector's shards shown oldest (so its picks land on them), and only its picks among them taken.
   * Their new home is then the fallback's allocate among the same nodes, counting the same load.
   */
  private evenOut(
    pin: PlacementPin,
    pinned: ReadonlySet<number>,
    currentShards: ShardAllocations,
    candidates: ReadonlyArray<NodeAddress>,
    rebalanceInProgress: ReadonlySet<number>,
    view: ClusterReading,
    moves: Set<number>,
  ): void {
    const allowed = matchingCandidates(pin, candidates, view);
    if (allowed.length < 2) return;
    const groupView = new Map<string, ReadonlySet<number>>();
    for (const address of allowed) {
      const key = address.toString();
      const shards = currentShards.get(key) ?? new Set<number>();
      const first = new Set<number>();
      for (const shardId of shards) if (pinned.has(shardId)) first.add(shardId);
      for (const shardId of shards) first.add(shardId);
      groupView.set(key, first);
    }
    for (const shardId of this.fallback.rebalance(groupView, allowed, rebalanceInProgress)) {
      if (pinned.has(shardId) && !rebalanceInProgress.has(shardId)) moves.add(shardId);
    }
  }

  /** The fallback's pick in `pool` (non-empty); undefined only when the fallback itself has no home now. */
  private fallbackChoice(
    shardId: number,
    pool: ReadonlyArray<NodeAddress>,
    currentShards: ShardAllocations,
  ): NodeAddress | undefined {
    const choice = this.fallback.allocate(shardId, pool, currentShards);
    if (choice === undefined) return undefined;
    const choiceKey = String(choice);
    const match = pool.find((candidate) => candidate.toString() === choiceKey);
    if (match !== undefined) return match;
    // A fallback answering outside its candidates is a bug in it; never let that leave the shard homeless.
    const repaired = pool[0] as NodeAddress;
    this.warnings.emit(
      `shard ${shardId}: the fallback strategy returned ${choiceKey}, which is not a candidate; allocated to ${repaired.toString()}`,
      { shardId, returned: choiceKey, allocatedTo: repaired.toString() },
    );
    return repaired;
  }
}

function describeProblem(problem: string): string {
  return problem === 'no matching node' ? 'matched by no reachable candidate' : problem;
}

/** The same shards, those in `last` moved to the end (each part keeps its order). */
function youngestLast(shards: ReadonlySet<number>, last: ReadonlySet<number>): Set<number> {
  const reordered = new Set<number>();
  for (const shardId of shards) if (!last.has(shardId)) reordered.add(shardId);
  for (const shardId of last) reordered.add(shardId);
  return reordered;
}
