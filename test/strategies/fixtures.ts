// Builders shared by the strategy tests: node addresses, shard maps and cluster views.
import { NodeAddress } from '../../src/cluster/address.js';
import type { ClusterView, MemberInfo } from '../../src/cluster/member.js';
import { memberInfo, type MemberRecord } from '../support/members.js';

/** `app@10.0.0.<n>:7700`: node(1) < node(2) < ... as address strings for n below 10. */
export function node(n: number): NodeAddress {
  return new NodeAddress('app', `10.0.0.${n}`, 7700);
}

/** A shard map keyed by address string, each set in the given (allocation) order. */
export function shardMap(
  entries: ReadonlyArray<readonly [NodeAddress, ReadonlyArray<number>]>,
): Map<string, Set<number>> {
  return new Map(entries.map(([address, shards]) => [address.toString(), new Set(shards)]));
}

/** A shard map in which node(1), node(2), ... hold the given lists, in that order. */
export function nodeShards(...lists: ReadonlyArray<ReadonlyArray<number>>): Map<string, Set<number>> {
  return shardMap(lists.map((shards, i) => [node(i + 1), shards] as const));
}

/** A sequential run of shard ids: range(3, 2) = [3, 4]. */
export function range(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => from + i);
}

export type MemberSpec = MemberRecord;

/** A member record (the shared builder of test/support/): Up, reachable, version 1.0.0, upNumber 1 by default. */
export function member(spec: MemberSpec): MemberInfo {
  return memberInfo(spec);
}

/** A view whose members can be changed between calls, as a live cluster's would. */
export class TestView implements ClusterView {
  calls = 0;
  private current: MemberInfo[];

  constructor(specs: ReadonlyArray<MemberSpec>) {
    this.current = specs.map(member);
  }

  members(): ReadonlyArray<MemberInfo> {
    this.calls++;
    return this.current;
  }

  set(specs: ReadonlyArray<MemberSpec>): void {
    this.current = specs.map(member);
  }
}

/** Healthy, same-version members for the given nodes, oldest first. */
export function healthyView(addresses: ReadonlyArray<NodeAddress>): TestView {
  return new TestView(addresses.map((address, i) => ({ address, upNumber: i + 1 })));
}

export function sorted(shards: Iterable<number>): number[] {
  return [...shards].sort((a, b) => a - b);
}
