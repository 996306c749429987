// The bridge to actor-ts's sharding: `asActorTsStrategy` turns any of our allocation strategies (external,
// least-shard, hash, or your own) into one actor-ts's ShardCoordinator can take. The shapes below are
// actor-ts's, matched against pathosDev/actor-ts at commit d219e970: src/cluster/sharding/AllocationStrategy.ts
// (`AllocationStrategy`) and src/cluster/NodeAddress.ts (`NodeAddress`). Differences the adapter absorbs:
// actor-ts's `allocate` must return a candidate (its coordinator calls `equals` on the answer, so undefined
// throws inside its message handler) and its `rebalance` returns a mutable Set.
import { NodeAddress } from '../../cluster/address.js';
import { ActorTsError } from '../../errors.js';
import { isAllocationStrategy, type AllocationStrategy } from './allocation-strategy.js';
import type { WarningSink } from './external-warnings.js';

/**
 * What the adapter needs of an actor-ts `NodeAddress`: its `system@host:port` string and its order. actor-ts's
 * own class satisfies it, and so does ours.
 */
export interface ActorTsAddress {
  readonly systemName: string;
  readonly host: string;
  readonly port: number;
  toString(): string;
  equals(other: ActorTsAddress): boolean;
  compareTo(other: ActorTsAddress): number;
}

/**
 * actor-ts's `AllocationStrategy` over its address type `A`: `allocate` always names one of `candidates`,
 * `rebalance` answers a fresh mutable Set. Maps are keyed by `A.toString()`, as actor-ts's coordinator builds them.
 */
export interface ActorTsAllocationStrategy<A extends ActorTsAddress = ActorTsAddress> {
  allocate(shardId: number, candidates: ReadonlyArray<A>, currentShards: ReadonlyMap<string, ReadonlySet<number>>): A;
  rebalance(
    currentShards: ReadonlyMap<string, ReadonlySet<number>>,
    candidates: ReadonlyArray<A>,
    rebalanceInProgress: ReadonlySet<number>,
  ): Set<number>;
}

/** Options of `asActorTsStrategy`. */
export interface ActorTsStrategyOptions {
  /**
   * Told when the strategy had no home for a shard (a `require` pin no candidate satisfies) and the adapter
   * placed it on the least-loaded candidate instead. Defaults to silence.
   */
  readonly onWarning?: WarningSink;
}

/**
 * Wraps `strategy` for actor-ts: it takes and returns actor-ts's own address objects (the answer of `allocate`
 * is always one of the candidates it was given, the very object) and never returns undefined. Where our
 * strategy answers "no home now" (a `require` pin with no matching reachable node), actor-ts has no such
 * answer, so the shard goes to the candidate with the fewest shards (ties: the lowest by `compareTo`) and
 * `onWarning` is told; the hard pin is honoured again once a matching node is a candidate, because our
 * strategy's `rebalance` then moves the shard there (until then `rebalance` leaves it where it is, rather than
 * moving it from one non-matching node to another every round). Candidates must be valid by `NodeAddress.parse` (port
 * 1..65535, a system name of letters, digits, `_` and `-`); another address throws `invalid_address`.
 */
export function asActorTsStrategy<A extends ActorTsAddress>(
  strategy: AllocationStrategy,
  options: ActorTsStrategyOptions = {},
): ActorTsAllocationStrategy<A> {
  if (!isAllocationStrategy(strategy)) {
    throw new ActorTsError('invalid_argument', 'asActorTsStrategy needs an AllocationStrategy');
  }
  const onWarning = options.onWarning;
  return {
    allocate(shardId, candidates, currentShards) {
      const ours = candidates.map(toOurs);
      const home = strategy.allocate(shardId, ours, currentShards);
      const chosen =
        home === undefined ? undefined : candidates.find((candidate) => candidate.toString() === home.toString());
      if (chosen !== undefined) return chosen;
      // Our strategies answer one of `ours` or undefined; anything else is a custom strategy's slip.
      const instead = leastLoaded(candidates, currentShards);
      if (onWarning !== undefined) {
        const why =
          home === undefined
            ? 'no home for the shard (a require pin no candidate satisfies)'
            : `${home.toString()} is not a candidate`;
        try {
          onWarning(`allocation strategy: ${why}; actor-ts needs one, so it goes to the least-loaded candidate`, {
            shardId,
            home: instead.toString(),
          });
        } catch {
          // A failing logger must not turn a placement decision into an exception.
        }
      }
      return instead;
    },
    rebalance(currentShards, candidates, rebalanceInProgress) {
      const ours = candidates.map(toOurs);
      const moves = new Set<number>();
      for (const shardId of strategy.rebalance(currentShards, ours, rebalanceInProgress)) {
        // Our strategies hand off a shard on a node its require pin rejects even when no node matches, because
        // there it then waits without a home. Here allocate would put it on some non-matching node again, so
        // the move would repeat every round: it stays until allocate has a home for it.
        if (strategy.allocate(shardId, ours, currentShards) !== undefined) moves.add(shardId);
      }
      return moves;
    },
  };
}

function toOurs(address: ActorTsAddress): NodeAddress {
  if (address instanceof NodeAddress) return address;
  // parse interns, so the same actor-ts address costs one map lookup per call after the first.
  return NodeAddress.parse(String(address));
}

function leastLoaded<A extends ActorTsAddress>(
  candidates: ReadonlyArray<A>,
  currentShards: ReadonlyMap<string, ReadonlySet<number>>,
): A {
  let best = candidates[0];
  if (best === undefined) throw new ActorTsError('invalid_argument', 'allocate needs at least one candidate node');
  let bestLoad = currentShards.get(best.toString())?.size ?? 0;
  for (const candidate of candidates) {
    const load = currentShards.get(candidate.toString())?.size ?? 0;
    if (load < bestLoad || (load === bestLoad && candidate.compareTo(best) < 0)) {
      best = candidate;
      bestLoad = load;
    }
  }
  return best;
}
