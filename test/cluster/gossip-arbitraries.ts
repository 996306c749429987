// fast-check arbitraries of membership gossip states (members of four ports, tombstones, reachability rows),
// shared by the merge and digest property tests.
import fc from 'fast-check';
import { NodeAddress } from '../../src/cluster/address.js';
import { keyOf, mergeRecord, type GossipState, type MemberRecord } from '../../src/cluster/membership/gossip.js';
import type { MemberStatus } from '../../src/cluster/member.js';
import { mergeTables, type ReachabilityTable } from '../../src/cluster/membership/reachability-table.js';

export const STATUSES: MemberStatus[] = ['joining', 'weakly-up', 'up', 'leaving', 'exiting', 'down', 'removed'];

export function record(port: number, status: MemberStatus, upNumber = 0): MemberRecord {
  return { address: new NodeAddress('sys', 'h', port), incarnation: 'i', status, appVersion: '1', roles: [], upNumber };
}

export const recordArb = fc
  .tuple(
    fc.integer({ min: 1, max: 4 }),
    fc.constantFrom(...STATUSES),
    fc.integer({ min: 0, max: 5 }),
    fc.option(fc.nat(50), { nil: undefined }),
  )
  .map(([port, status, up, downedAtMs]) =>
    downedAtMs === undefined ? record(port, status, up) : { ...record(port, status, up), downedAtMs },
  );

export const tombstonesArb = fc
  .array(fc.tuple(fc.integer({ min: 1, max: 4 }), fc.nat(100)), { maxLength: 2 })
  .map((entries) => new Map(entries.map(([port, at]) => [keyOf(record(port, 'removed')), at] as const)));

/**
 * Reachability rows by observer port: [version, subject ports]; only rows and subjects of the state's members are kept.
 */
const rowsArb = fc.array(
  fc.tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 3 }), fc.subarray([1, 2, 3, 4])),
  { maxLength: 4 },
);

export const stateArb: fc.Arbitrary<GossipState> = fc
  .tuple(fc.array(recordArb, { maxLength: 6 }), tombstonesArb, rowsArb)
  .map(([records, tombstones, rows]) => {
    const members = new Map<string, MemberRecord>();
    for (const r of records) {
      if (tombstones.has(keyOf(r))) continue;
      const existing = members.get(keyOf(r));
      members.set(keyOf(r), existing ? mergeRecord(existing, r) : r);
    }
    let reachability: ReachabilityTable = new Map();
    for (const [observer, version, subjects] of rows) {
      const k = keyOf(record(observer, 'up'));
      const ks = subjects.map((p) => keyOf(record(p, 'up'))).filter((x) => members.has(x));
      if (members.has(k)) reachability = mergeTables(reachability, new Map([[k, { version, subjects: new Set(ks) }]]));
    }
    return { members, seen: new Set<string>(), tombstones, reachability };
  });
