// External allocation: explicit placements (operator pins read from the replicated store's snapshot)
// decide a shard's home when the target can take it; every other shard is the fallback strategy's.
// A pin is a preference, not a constraint: an unusable target never leaves a shard homeless.
import type { NodeAddress } from '../../cluster/address.js';
import type { ClusterView } from '../../cluster/member.js';
import { ActorTsError } from '../../errors.js';
import {
  requireCandidates,
  requireShardId,
  type AllocationStrategy,
  type ShardAllocations,
} from './allocation-strategy.js';

export interface ExternalAllocationState {
  readonly explicitPlacements: ReadonlyMap<number, NodeAddress>;
}

export interface ExternalAllocationOptions {
  /** Reachability of targets; without it every candidate counts as reachable. */
  readonly cluster?: ClusterView;
  /** Called when a pin cannot be honoured; see `WarningLog` for when it repeats. Defaults to silence. */
  readonly onWarning?: (message: string, details: object) => void;
}

/** Why an explicit target cannot take its shard right now. */
export type PlacementProblem = 'not a candidate' | 'unreachable';

export function externalAllocationStrategy(
  fallback: AllocationStrategy,
  getState: () => ExternalAllocationState,
  options: ExternalAllocationOptions = {},
): AllocationStrategy {
  if (
    fallback === null ||
    typeof fallback !== 'object' ||
    typeof fallback.allocate !== 'function' ||
    typeof fallback.rebalance !== 'function'
  ) {
    throw new ActorTsError('invalid_argument', 'externalAllocationStrategy needs a fallback AllocationStrategy');
  }
  if (typeof getState !== 'function') {
    throw new ActorTsError('invalid_argument', 'externalAllocationStrategy needs a getState function');
  }
  if (options.onWarning !== undefined && typeof options.onWarning !== 'function') {
    throw new ActorTsError('invalid_argument', 'onWarning must be a function');
  }
  return new ExternalAllocationStrategy(fallback, getState, options.cluster, new WarningLog(options.onWarning));
}

class ExternalAllocationStrategy implements AllocationStrategy {
  constructor(
    private readonly fallback: AllocationStrategy,
    private readonly getState: () => ExternalAllocationState,
    private readonly cluster: ClusterView | undefined,
    private readonly warnings: WarningLog,
  ) {}

  allocate(shardId: number, candidates: ReadonlyArray<NodeAddress>, currentShards: ShardAllocations): NodeAddress {
    requireShardId(shardId);
    requireCandidates(candidates);
    const target = this.getState().explicitPlacements.get(shardId);
    const reachable = reachableAddresses(this.cluster);
    if (target === undefined) {
      this.warnings.forget(shardId);
      return this.fallbackChoice(shardId, candidates, reachable, currentShards);
    }
    const targetKey = target.toString();
    const match = candidates.find((candidate) => candidate.toString() === targetKey);
    const problem = problemWith(targetKey, match !== undefined, reachable);
    if (match !== undefined && problem === undefined) {
      this.warnings.forget(shardId);
      return match;
    }
    const choice = this.fallbackChoice(shardId, candidates, reachable, currentShards);
    const reason = problem ?? 'not a candidate';
    this.warnings.report(
      shardId,
      targetKey,
      reason,
      `shard ${shardId}: explicit target ${targetKey} is ${reason}; allocated to ${choice.toString()} by the fallback strategy`,
      { allocatedTo: choice.toString() },
    );
    return choice;
  }

  /**
   * O(allocated shards + candidates + members): one pass over `currentShards` with a map lookup per
   * shard; nothing is sorted here (the fallback does its own work).
   */
  rebalance(
    currentShards: ShardAllocations,
    candidates: ReadonlyArray<NodeAddress>,
    rebalanceInProgress: ReadonlySet<number>,
  ): ReadonlySet<number> {
    const pins = this.getState().explicitPlacements;
    const reachable = reachableAddresses(this.cluster);
    const candidateKeys = new Set(candidates.map((candidate) => candidate.toString()));
    const moves = new Set<number>();
    // Regions holding pinned shards, re-ordered for the fallback (see below).
    let fallbackView: Map<string, ReadonlySet<number>> | undefined;

    for (const [home, shards] of currentShards) {
      let pinnedHere: number[] | undefined;
      for (const shardId of shards) {
        const target = pins.get(shardId);
        if (target === undefined) continue;
        (pinnedHere ??= []).push(shardId);
        if (rebalanceInProgress.has(shardId)) continue;
        const targetKey = target.toString();
        if (targetKey === home) {
          this.warnings.forget(shardId);
          continue;
        }
        const problem = problemWith(targetKey, candidateKeys.has(targetKey), reachable);
        if (problem === undefined) {
          this.warnings.forget(shardId);
          moves.add(shardId);
        } else {
          this.warnings.report(
            shardId,
            targetKey,
            problem,
            `shard ${shardId}: explicit target ${targetKey} is ${problem}; the shard stays on ${home}`,
            { stayingOn: home },
          );
        }
      }
      if (pinnedHere !== undefined) {
        // Pinned shards still count as load (the fallback's allocate counts them too, and a
        // mismatch would bounce shards back and forth), but they are shown to the fallback as the
        // youngest, so its oldest-first picks land on shards that may actually move.
        const pinned = new Set(pinnedHere);
        const reordered = new Set<number>();
        for (const shardId of shards) if (!pinned.has(shardId)) reordered.add(shardId);
        for (const shardId of pinnedHere) reordered.add(shardId);
        (fallbackView ??= new Map(currentShards)).set(home, reordered);
      }
    }
    this.warnings.prune(pins);

    const suggestions = this.fallback.rebalance(
      fallbackView ?? currentShards,
      reachablePool(candidates, reachable),
      rebalanceInProgress,
    );
    for (const shardId of suggestions) {
      if (!pins.has(shardId) && !rebalanceInProgress.has(shardId)) moves.add(shardId);
    }
    return moves;
  }

  /** The fallback's pick among the reachable candidates (all of them when none is reachable). */
  private fallbackChoice(
    shardId: number,
    candidates: ReadonlyArray<NodeAddress>,
    reachable: ReadonlySet<string> | undefined,
    currentShards: ShardAllocations,
  ): NodeAddress {
    const pool = reachablePool(candidates, reachable);
    const choice = this.fallback.allocate(shardId, pool, currentShards);
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

/** Addresses the view says are reachable and still members; undefined without a view (all are). */
function reachableAddresses(cluster: ClusterView | undefined): ReadonlySet<string> | undefined {
  if (cluster === undefined) return undefined;
  const reachable = new Set<string>();
  for (const member of cluster.members()) {
    // A downed or removed member will not come back to take a shard, whatever its last heartbeat said.
    if (member.reachable && member.status !== 'down' && member.status !== 'removed') {
      reachable.add(member.address.toString());
    }
  }
  return reachable;
}

/**
 * A target the view does not list counts as unreachable: it cannot be vouched for yet. A pin to a
 * node that has not joined is therefore kept and honoured once the node is a reachable candidate.
 */
function problemWith(
  targetKey: string,
  isCandidate: boolean,
  reachable: ReadonlySet<string> | undefined,
): PlacementProblem | undefined {
  if (!isCandidate) return 'not a candidate';
  if (reachable !== undefined && !reachable.has(targetKey)) return 'unreachable';
  return undefined;
}

function reachablePool(
  candidates: ReadonlyArray<NodeAddress>,
  reachable: ReadonlySet<string> | undefined,
): ReadonlyArray<NodeAddress> {
  if (reachable === undefined) return candidates;
  const pool = candidates.filter((candidate) => reachable.has(candidate.toString()));
  return pool.length > 0 ? pool : candidates;
}

/**
 * Dedupe policy: a warning about shard S is emitted when S's (target, reason) differs from the last
 * one reported for S; it is not repeated while that situation lasts (the coordinator calls allocate
 * and rebalance every tick). The record is dropped when the pin is honoured, moved, changed or
 * removed, so the same problem coming back later is reported again. Memory is bounded by the
 * number of pinned shards with a live problem.
 */
class WarningLog {
  private readonly reported = new Map<number, string>();

  constructor(private readonly sink: ((message: string, details: object) => void) | undefined) {}

  report(shardId: number, target: string, reason: PlacementProblem, message: string, extra: object): void {
    const situation = `${target}\u0000${reason}`;
    if (this.reported.get(shardId) === situation) return;
    this.reported.set(shardId, situation);
    this.emit(message, { shardId, target, reason, ...extra });
  }

  forget(shardId: number): void {
    this.reported.delete(shardId);
  }

  /** Drops records whose pin is gone or now names another target. */
  prune(pins: ReadonlyMap<number, NodeAddress>): void {
    for (const [shardId, situation] of this.reported) {
      const target = pins.get(shardId);
      if (target === undefined || !situation.startsWith(`${target.toString()}\u0000`)) this.reported.delete(shardId);
    }
  }

  emit(message: string, details: object): void {
    if (this.sink === undefined) return;
    try {
      this.sink(message, details);
    } catch {
      // A failing logger must not turn a placement decision into an exception.
    }
  }
}
