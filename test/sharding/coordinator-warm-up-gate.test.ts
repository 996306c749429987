// The warm-up and partition gate alone: when it becomes warm, what waits until then, and when shards nobody
// reported may be given a home (never while an unregistered member may still run them).
import { describe, expect, it } from 'vitest';
import type { MemberInfo } from '../../src/cluster/member.js';
import { silentLogger } from '../../src/logging.js';
import { Dispatcher, type Effects } from '../../src/sharding/coordinator/effects.js';
import { WarmUpGate } from '../../src/sharding/coordinator/membership.js';
import { ManualScheduler, address, member, stateWith } from './coordinator-fakes.js';

/**
 * The gate driven as the coordinator drives it: each call is one dispatch (`act`), its timer on the manual
 * scheduler; becoming warm is recorded in `events` ("warm: reason"), then the queued actions run.
 */
function gate(members: MemberInfo[], options: { role?: string; downedUnregistered?: () => boolean } = {}) {
  const scheduler = new ManualScheduler();
  const registered = new Set<string>();
  const events: string[] = [];
  const downed = options.downedUnregistered ?? (() => false);
  const subject = new WarmUpGate({
    role: options.role,
    warmupMs: 500,
    logger: silentLogger(),
    members: () => members,
    state: { isRegistered: (key) => registered.has(key) },
    margin: { anyInMargin: () => downed() },
    now: () => scheduler.now(),
  });
  const warmed = (reason: string | undefined): void => {
    if (reason === undefined) return;
    events.push(`warm: ${reason}`);
    for (const action of subject.takeQueued()) action();
  };
  const dispatcher = new Dispatcher(stateWith([]), scheduler, { send: () => {}, report: () => {} }, (_fx, timer) => {
    if (timer.type === 'warm-up') warmed(subject.elapsed());
  });
  let result: unknown;
  const act = <T>(work: (fx: Effects) => T): T => {
    dispatcher.dispatch((fx) => (result = work(fx)));
    return result as T;
  };
  const start = (): void => act((fx) => warmed(subject.start(fx)));
  const check = (): void => act((fx) => warmed(subject.check(fx)));
  const trackReturningMembers = (): string[] => act((fx) => subject.trackReturningMembers(fx));
  const stop = (): void => {
    subject.stop();
    dispatcher.timers.cancelAll();
  };
  return { subject, scheduler, registered, events, members, start, check, trackReturningMembers, stop };
}

describe('WarmUpGate', () => {
  it('becomes warm when the warm-up time elapses, once', () => {
    const { subject, scheduler, events, start, check } = gate([member(1), member(2)]);
    start();
    scheduler.advance(499);
    expect(subject.isWarm).toBe(false);
    scheduler.advance(1);
    expect(subject.isWarm).toBe(true);
    expect(events).toEqual(['warm: warm-up time elapsed']);
    check();
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
    const { subject, registered, events, scheduler, start, check } = gate(members, { role: 'x' });
    start();
    expect(subject.expectedRegions()).toEqual([address(5)]);
    expect(subject.isWarm).toBe(false);
    registered.add(address(5));
    check();
    expect(events).toEqual(['warm: every region registered']);
    expect(scheduler.pending).toBe(0);
  });

  it('runs queued actions once warm, after onWarm, in order; later ones at once', () => {
    const { subject, scheduler, events, start } = gate([member(1)]);
    start();
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
    const { subject, scheduler, registered, start, check } = gate(members, { downedUnregistered: () => downed });
    start();
    registered.add(address(1));
    check();
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
    const { subject, scheduler, registered, events, start, check, trackReturningMembers } = gate(members);
    start();
    registered.add(address(1));
    check();
    expect(trackReturningMembers()).toEqual([]);
    members[1] = member(2);
    expect(trackReturningMembers()).toEqual([address(2)]);
    expect(subject.isWarm).toBe(false);
    expect(trackReturningMembers()).toEqual([]);
    scheduler.advance(500);
    expect(subject.isWarm).toBe(true);
    expect(events).toEqual(['warm: every region registered', 'warm: warm-up time elapsed']);
  });

  it('a returning member that registered meanwhile is not waited for', () => {
    const members = [member(1), member(2, 'up', { reachable: false })];
    const { subject, registered, start, check, trackReturningMembers } = gate(members);
    start();
    registered.add(address(1));
    check();
    members[1] = member(2);
    registered.add(address(2));
    expect(trackReturningMembers()).toEqual([]);
    expect(subject.isWarm).toBe(true);
  });

  it('once stopped, neither becomes warm nor opens, and leaves no timer', () => {
    const { subject, scheduler, registered, start, check, stop } = gate([member(1)]);
    start();
    stop();
    expect(scheduler.pending).toBe(0);
    registered.add(address(1));
    check();
    scheduler.advance(1_000);
    expect(subject.isWarm).toBe(false);
    expect(subject.open).toBe(false);
  });
});
