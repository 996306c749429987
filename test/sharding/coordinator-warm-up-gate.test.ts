// The warm-up and partition gate alone: when it becomes warm, what waits until then, and when shards nobody
// reported may be given a home (never while an unregistered member may still run them).
import { describe, expect, it } from 'vitest';
import type { MemberInfo } from '../../src/cluster/member.js';
import { silentLogger } from '../../src/logging.js';
import { WarmUpGate } from '../../src/sharding/coordinator/warm-up-gate.js';
import { ManualScheduler, address, member } from './coordinator-fakes.js';

function gate(members: MemberInfo[], options: { role?: string; downedUnregistered?: () => boolean } = {}) {
  const scheduler = new ManualScheduler();
  const registered = new Set<string>();
  const events: string[] = [];
  const subject = new WarmUpGate(
    { role: options.role, warmupMs: 500, scheduler, logger: silentLogger() },
    {
      members: () => members,
      isRegistered: (key) => registered.has(key),
      downedUnregistered: options.downedUnregistered ?? (() => false),
      warm: (reason) => events.push(`warm: ${reason}`),
    },
  );
  return { subject, scheduler, registered, events, members };
}

describe('WarmUpGate', () => {
  it('becomes warm when the warm-up time elapses, once', () => {
    const { subject, scheduler, events } = gate([member(1), member(2)]);
    subject.start();
    scheduler.advance(499);
    expect(subject.isWarm).toBe(false);
    scheduler.advance(1);
    expect(subject.isWarm).toBe(true);
    expect(events).toEqual(['warm: warm-up time elapsed']);
    subject.check();
    expect(events).toHaveLength(1);
  });

  it('becomes warm early once every reachable member that may host the type registered', () => {
    const members = [
      member(1),
      member(2, 'leaving'),
      member(3, 'joining'),
      member(4, 'up', { reachable: false }),
      member(5, 'up', { roles: ['x'] }),
    ];
    const { subject, registered, events, scheduler } = gate(members, { role: 'x' });
    subject.start();
    expect(subject.expectedRegions()).toEqual([address(5)]);
    expect(subject.isWarm).toBe(false);
    registered.add(address(5));
    subject.check();
    expect(events).toEqual(['warm: every region registered']);
    expect(scheduler.pending).toBe(0);
  });

  it('runs queued actions once warm, after onWarm, in order; later ones at once', () => {
    const { subject, scheduler, events } = gate([member(1)]);
    subject.start();
    subject.whenWarm(() => events.push('first'));
    subject.whenWarm(() => events.push('second'));
    expect(events).toEqual([]);
    scheduler.advance(500);
    subject.whenWarm(() => events.push('third'));
    expect(events).toEqual(['warm: warm-up time elapsed', 'first', 'second', 'third']);
  });

  it('stays closed while an unregistered member is unreachable, or a just-downed one has not registered', () => {
    let downed = false;
    const members = [member(1), member(2, 'up', { reachable: false })];
    const { subject, scheduler, registered } = gate(members, { downedUnregistered: () => downed });
    subject.start();
    registered.add(address(1));
    subject.check();
    expect(subject.isWarm).toBe(true);
    expect(subject.open).toBe(false);
    registered.add(address(2));
    expect(subject.open).toBe(true);
    downed = true;
    expect(subject.open).toBe(false);
    expect(subject.unknownHostsUnreachable()).toBe(true);
    scheduler.advance(10_000);
    expect(subject.open).toBe(false);
  });

  it('cools down again when an unregistered unreachable member comes back, and asks it to register', () => {
    const members = [member(1), member(2, 'up', { reachable: false })];
    const { subject, scheduler, registered, events } = gate(members);
    subject.start();
    registered.add(address(1));
    subject.check();
    expect(subject.trackReturningMembers()).toEqual([]);
    members[1] = member(2);
    expect(subject.trackReturningMembers()).toEqual([address(2)]);
    expect(subject.isWarm).toBe(false);
    expect(subject.trackReturningMembers()).toEqual([]);
    scheduler.advance(500);
    expect(subject.isWarm).toBe(true);
    expect(events).toEqual(['warm: every region registered', 'warm: warm-up time elapsed']);
  });

  it('a returning member that registered meanwhile is not waited for', () => {
    const members = [member(1), member(2, 'up', { reachable: false })];
    const { subject, registered } = gate(members);
    subject.start();
    registered.add(address(1));
    subject.check();
    members[1] = member(2);
    registered.add(address(2));
    expect(subject.trackReturningMembers()).toEqual([]);
    expect(subject.isWarm).toBe(true);
  });

  it('once stopped, neither becomes warm nor opens, and leaves no timer', () => {
    const { subject, scheduler, registered } = gate([member(1)]);
    subject.start();
    subject.stop();
    expect(scheduler.pending).toBe(0);
    registered.add(address(1));
    subject.check();
    scheduler.advance(1_000);
    expect(subject.isWarm).toBe(false);
    expect(subject.open).toBe(false);
  });
});
