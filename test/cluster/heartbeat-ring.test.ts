// The heartbeat ring: every member is monitored by min(k, N - 1) others, a join changes only the monitors
// next to it on the ring, and members seen unreachable do not count towards a member's monitors.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { heartbeatTargets, monitorsOf, type RingMember } from '../../src/cluster/membership/heartbeat-ring.js';

const ringMember = (port: number): RingMember => ({
  key: `sys@h:${port}#i`,
  address: new NodeAddress('sys', 'h', port),
});
const ports = fc.uniqueArray(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 60 });

function pairs(members: ReadonlyArray<RingMember>, k: number): Set<string> {
  return new Set(members.flatMap((m) => heartbeatTargets(members, m.key, k).map((t) => `${m.key}>${t}`)));
}

describe('heartbeat ring', () => {
  it('has every member monitored by min(k, N - 1) others, and each node monitoring as many', () => {
    fc.assert(
      fc.property(ports, fc.integer({ min: 1, max: 12 }), (list, k) => {
        const members = list.map(ringMember);
        const expected = Math.min(k, members.length - 1);
        for (const [subject, monitors] of monitorsOf(members, k)) {
          expect(new Set(monitors).size).toBe(expected);
          expect(monitors).not.toContain(subject);
        }
        for (const m of members) expect(heartbeatTargets(members, m.key, k)).toHaveLength(expected);
      }),
    );
  });

  it('is the same whatever order the members are listed in', () => {
    fc.assert(
      fc.property(ports, fc.integer({ min: 1, max: 12 }), (list, k) => {
        const members = list.map(ringMember);
        expect(pairs([...members].reverse(), k)).toEqual(pairs(members, k));
      }),
    );
  });

  it('is stable under joins: one join ends at most k monitoring pairs', () => {
    fc.assert(
      fc.property(ports, fc.integer({ min: 5001, max: 9000 }), fc.integer({ min: 1, max: 12 }), (list, joiner, k) => {
        const before = list.map(ringMember);
        const after = [...before, ringMember(joiner)];
        const kept = pairs(before, k);
        const now = pairs(after, k);
        const ended = [...kept].filter((p) => !now.has(p));
        expect(ended.length).toBeLessThanOrEqual(k);
      }),
    );
  });

  it('keeps unreachable members monitored without counting them, so k reachable monitors remain', () => {
    const members = Array.from({ length: 20 }, (_, i) => ringMember(i + 1));
    const unreachable = new Set([members[1]!.key, members[2]!.key]);
    const targets = heartbeatTargets(members, members[0]!.key, 3, unreachable);
    expect(targets).toEqual([members[1]!.key, members[2]!.key, members[3]!.key, members[4]!.key, members[5]!.key]);
    expect(heartbeatTargets(members, 'not-a-member', 3)).toEqual([]);
  });
});
