// Dry runs: the hand-offs the coordinator would start right now and where each shard would land, computed
// with the calls the coordinator itself makes (shardsToMove for a rebalance round, judgeRebalanceNow for a
// manual move, chooseHome when a hand-off ends) on a copy of its shard map. Nothing is sent or recorded.
import type { NodeAddress } from '../../cluster/address.js';
import type { DryRunMove, ProposedPin } from '../protocol/insight-messages.js';
import { tryParsePlacementTarget } from '../placements/placement-target.js';
import type { AllocationStrategy } from '../strategies/index.js';
import { PlacementPin, type PinLike } from '../placements/placement-pin.js';
import { chooseHome, shardsToMove } from './allocation.js';

export type ShardMap = ReadonlyMap<string, ReadonlySet<number>>;

/**
 * Where each shard of `handedOff` lands: hand-offs in this order, each shard allocated (chooseHome, as
 * ShardHomes.freed does) when its own hand-off ends, with the earlier ones already landed. A shard without
 * a home, or already moving, is skipped (HandOffs.begin starts nothing for it). `to` is null when the
 * strategy has no home for it now.
 */
export function landings(
  strategy: AllocationStrategy,
  candidates: ReadonlyArray<NodeAddress>,
  shards: ShardMap,
  inProgress: ReadonlySet<number>,
  handedOff: Iterable<number>,
): DryRunMove[] {
  const map = new Map([...shards].map(([key, owned]) => [key, new Set(owned)]));
  const homes = new Map<number, string>();
  for (const [key, owned] of map) for (const shardId of owned) homes.set(shardId, key);
  const moves: DryRunMove[] = [];
  for (const shardId of new Set(handedOff)) {
    const from = homes.get(shardId);
    if (from === undefined || inProgress.has(shardId)) continue;
    map.get(from)?.delete(shardId);
    homes.delete(shardId);
    const to = chooseHome(strategy, shardId, candidates, map)?.region ?? null;
    if (to !== null) {
      let owned = map.get(to);
      if (owned === undefined) map.set(to, (owned = new Set()));
      owned.add(shardId);
      homes.set(shardId, to);
    }
    moves.push({ shardId, from, to });
  }
  return moves;
}

/** The shards a dry run's moves would leave without a home (the strategy has none for them now), ascending. */
export function withoutHome(moves: ReadonlyArray<DryRunMove>): number[] {
  return moves
    .filter((move) => move.to === null)
    .map((move) => move.shardId)
    .sort((a, b) => a - b);
}

/** The moves of one rebalance round (what Allocator.shardsToRebalance picks, then landings); or the strategy's error. */
export function rebalanceRoundMoves(
  strategy: AllocationStrategy,
  candidates: ReadonlyArray<NodeAddress>,
  shards: ShardMap,
  inProgress: ReadonlySet<number>,
): { readonly moves: DryRunMove[]; readonly error?: string } {
  let allocated = 0;
  for (const owned of shards.values()) allocated += owned.size;
  if (candidates.length === 0 || allocated === 0) return { moves: [] };
  const chosen = shardsToMove(strategy, candidates, shards, inProgress);
  if ('error' in chosen) return { moves: [], error: chosen.error };
  return { moves: landings(strategy, candidates, shards, inProgress, chosen.shards) };
}

/**
 * The pins as they would read once `proposed` were written: each proposed pin replaces the shard's current
 * one. A proposed target that cannot be parsed (the controller validated it, so only a foreign sender) is
 * left out and reported by shard id.
 */
export function pinsWith(
  current: ReadonlyMap<number, PinLike>,
  proposed: ReadonlyArray<ProposedPin>,
): { readonly pins: ReadonlyMap<number, PinLike>; readonly unreadable: number[] } {
  const pins = new Map(current);
  const unreadable: number[] = [];
  for (const { shardId, target, mode, expiresAt } of proposed) {
    const parsed = tryParsePlacementTarget(target);
    if (parsed === undefined) unreadable.push(shardId);
    else pins.set(shardId, new PlacementPin(parsed, mode, expiresAt));
  }
  return { pins, unreadable };
}
