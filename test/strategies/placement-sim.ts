// A coordinator's placement loop without the coordinator: shards allocated through a strategy, nodes joining
// and leaving, and rebalance rounds applied until the strategy asks for nothing (each moved shard handed
// off, then allocated again, one at a time, as ShardHomes.freed does). Shared by the ring tests and bench S9.
import type { NodeAddress } from '../../src/cluster/address.js';
import type { ClusterView, MemberInfo } from '../../src/cluster/member.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/index.js';
import { memberInfo } from '../support/members.js';

export class PlacementSim {
  readonly shards = new Map<string, Set<number>>();
  readonly homes = new Map<number, string>();
  /** Every time a shard started on a node other than the one it was on (allocations of new shards not counted). */
  moves = 0;
  /** Moves per shard, since the last `resetMoves`. */
  readonly movesOf = new Map<number, number>();
  private nodes: NodeAddress[];
  private upNumbers = new Map<string, number>();
  private nextUp = 1;
  /** Up, reachable, same version: what a settled cluster looks like to a strategy. */
  readonly view: ClusterView = {
    members: (): ReadonlyArray<MemberInfo> => this.nodes.map((address) => this.memberOf(address)),
  };

  constructor(nodes: ReadonlyArray<NodeAddress>) {
    this.nodes = [];
    for (const address of nodes) this.addNode(address);
  }

  get candidates(): ReadonlyArray<NodeAddress> {
    return this.nodes;
  }

  /** Allocates a shard without a home; returns its new home. */
  allocate(strategy: AllocationStrategy, shardId: number): string {
    const choice = strategy.allocate(shardId, this.nodes, this.shards);
    if (choice === undefined) throw new Error(`no home for shard ${shardId}`);
    const key = choice.toString();
    if (!this.nodes.some((address) => address.toString() === key)) throw new Error(`${key} is not a candidate`);
    let owned = this.shards.get(key);
    if (owned === undefined) this.shards.set(key, (owned = new Set()));
    owned.add(shardId);
    this.homes.set(shardId, key);
    return key;
  }

  /** Hands a shard off and allocates it again; counts a move when it lands elsewhere. */
  reallocate(strategy: AllocationStrategy, shardId: number): void {
    const from = this.homes.get(shardId);
    if (from !== undefined) this.shards.get(from)?.delete(shardId);
    this.homes.delete(shardId);
    if (this.allocate(strategy, shardId) !== from) this.countMove(shardId);
  }

  resetMoves(): void {
    this.moves = 0;
    this.movesOf.clear();
  }

  private countMove(shardId: number): void {
    this.moves++;
    this.movesOf.set(shardId, (this.movesOf.get(shardId) ?? 0) + 1);
  }

  addNode(address: NodeAddress): void {
    const key = address.toString();
    this.nodes.push(address);
    this.upNumbers.set(key, this.nextUp++);
    if (!this.shards.has(key)) this.shards.set(key, new Set());
  }

  /**
   * The node leaves: no longer a candidate, its shards, oldest first, are allocated among the others (each
   * one a move). `graceful` (a leave): they are handed off one by one, the others still on it meanwhile.
   * Otherwise (a crash): the region is gone with all its shards before the first is allocated again.
   */
  removeNode(strategy: AllocationStrategy, address: NodeAddress, graceful = true): void {
    const key = address.toString();
    this.nodes = this.nodes.filter((candidate) => candidate.toString() !== key);
    const orphans = [...(this.shards.get(key) ?? [])];
    if (!graceful) {
      this.shards.delete(key);
      for (const shardId of orphans) this.homes.delete(shardId);
    }
    for (const shardId of orphans) {
      this.shards.get(key)?.delete(shardId);
      this.homes.delete(shardId);
      this.allocate(strategy, shardId);
      this.countMove(shardId);
    }
    this.shards.delete(key);
  }

  /** Rebalance rounds until one asks for nothing; returns the rounds run. Throws past `maxRounds`. */
  settle(strategy: AllocationStrategy, maxRounds = 10_000): number {
    for (let round = 0; round < maxRounds; round++) {
      const picks = strategy.rebalance(this.shards, this.nodes, new Set());
      if (picks.size === 0) return round;
      for (const shardId of picks) this.reallocate(strategy, shardId);
    }
    throw new Error(`not settled after ${maxRounds} rounds`);
  }

  loads(): number[] {
    return this.nodes.map((address) => this.shards.get(address.toString())?.size ?? 0);
  }

  allocated(): number {
    return this.homes.size;
  }

  private memberOf(address: NodeAddress): MemberInfo {
    return memberInfo({ address, upNumber: this.upNumbers.get(address.toString()) ?? 0 });
  }
}
