// Phi accrual failure detector: deterministic suspicion from an injected clock.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_FAILURE_DETECTOR_CONFIG } from '../../src/cluster/membership/config.js';
import {
  FailureDetectorRegistry,
  PhiAccrualFailureDetector,
  phi,
} from '../../src/cluster/membership/failure-detector.js';

const config = DEFAULT_FAILURE_DETECTOR_CONFIG;

function regular(detector: PhiAccrualFailureDetector, count: number, intervalMs: number): number {
  let t = 0;
  for (let i = 0; i < count; i++) {
    detector.heartbeat(t);
    t += intervalMs;
  }
  return t - intervalMs;
}

describe('PhiAccrualFailureDetector', () => {
  it('stays available within the acceptable pause and suspects beyond it', () => {
    const detector = new PhiAccrualFailureDetector(config);
    const last = regular(detector, 20, 1_000);
    expect(detector.isAvailable(last + 1_000)).toBe(true);
    expect(detector.isAvailable(last + 3_500)).toBe(true);
    expect(detector.isAvailable(last + 6_000)).toBe(false);
  });

  it('grows phi monotonically with silence', () => {
    const detector = new PhiAccrualFailureDetector(config);
    const last = regular(detector, 10, 1_000);
    let previous = -1;
    for (let t = last; t < last + 10_000; t += 250) {
      const value = detector.phi(t);
      expect(value).toBeGreaterThanOrEqual(previous);
      expect(Number.isFinite(value)).toBe(true);
      previous = value;
    }
  });

  it('tolerates longer silences for a peer whose heartbeats are irregular', () => {
    const steady = new PhiAccrualFailureDetector(config);
    const jittery = new PhiAccrualFailureDetector(config);
    let t = 0;
    for (let i = 0; i < 50; i++) {
      steady.heartbeat(i * 1_000);
      jittery.heartbeat(t);
      t += i % 2 === 0 ? 400 : 1_600;
    }
    const lastSteady = 49 * 1_000;
    const lastJittery = t - (48 % 2 === 0 ? 400 : 1_600);
    expect(jittery.phi(lastJittery + 4_500)).toBeLessThan(steady.phi(lastSteady + 4_500));
  });

  it('reports phi 0 and availability before the first heartbeat', () => {
    const detector = new PhiAccrualFailureDetector(config);
    expect(detector.phi(123_456)).toBe(0);
    expect(detector.isAvailable(123_456)).toBe(true);
    expect(detector.isMonitoring).toBe(false);
  });

  it('tells the exact ms at which it turns unavailable, for regular and irregular histories', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 200, max: 3_000 }), { minLength: 1, maxLength: 30 }), (intervals) => {
        const detector = new PhiAccrualFailureDetector(config);
        let t = 0;
        detector.heartbeat(t);
        for (const interval of intervals) detector.heartbeat((t += interval));
        const at = detector.unavailableAtMs();
        expect(at).toBeDefined();
        expect(detector.isAvailable(at! - 1)).toBe(true);
        expect(detector.isAvailable(at!)).toBe(false);
      }),
    );
    expect(new PhiAccrualFailureDetector(config).unavailableAtMs()).toBeUndefined();
  });

  it('measures the silence from other signs of life too, without taking them as interval samples', () => {
    const withTraffic = new PhiAccrualFailureDetector(config);
    const plain = new PhiAccrualFailureDetector(config);
    const last = regular(withTraffic, 20, 1_000);
    regular(plain, 20, 1_000);
    withTraffic.alive(last + 400);
    withTraffic.alive(last + 100); // out of order: the latest sign of life counts
    expect(withTraffic.unavailableAtMs()).toBe(plain.unavailableAtMs()! + 400);
    // The next heartbeat's interval is measured from the last heartbeat, not from the other traffic.
    withTraffic.heartbeat(last + 1_000);
    plain.heartbeat(last + 1_000);
    expect(withTraffic.phi(last + 4_500)).toBe(plain.phi(last + 4_500));
    const untouched = new PhiAccrualFailureDetector(config);
    untouched.alive(5);
    expect(untouched.isMonitoring).toBe(false);
  });

  it('starts the clock on watch without a sample, so the first heartbeat adds no near-zero interval', () => {
    const watched = new PhiAccrualFailureDetector(config);
    watched.watch(0);
    expect(watched.isMonitoring).toBe(true);
    expect(watched.isAvailable(10_000)).toBe(false);
    watched.watch(9_000); // already watching: no effect
    expect(watched.isAvailable(10_000)).toBe(false);
    const fresh = new PhiAccrualFailureDetector(config);
    watched.heartbeat(10_001);
    fresh.heartbeat(10_001);
    for (let t = 11_001; t <= 20_001; t += 1_000) {
      watched.heartbeat(t);
      fresh.heartbeat(t);
    }
    expect(watched.unavailableAtMs()).toBe(fresh.unavailableAtMs());
  });

  it('never returns a non-finite phi for extreme silences', () => {
    expect(Number.isFinite(phi(1e12, 1_000, 100))).toBe(true);
    expect(phi(1e12, 1_000, 100)).toBeGreaterThan(1_000);
  });
});

describe('FailureDetectorRegistry', () => {
  it('keeps one detector per key and forgets removed keys', () => {
    const registry = new FailureDetectorRegistry(config);
    registry.heartbeat('a', 0);
    registry.heartbeat('b', 0);
    for (let t = 1_000; t <= 10_000; t += 1_000) registry.heartbeat('a', t);
    expect(registry.isAvailable('a', 11_000)).toBe(true);
    expect(registry.isAvailable('b', 11_000)).toBe(false);
    registry.remove('b');
    expect(registry.isMonitoring('b')).toBe(false);
    expect(registry.isAvailable('b', 11_000)).toBe(true);
    expect([...registry.keys()]).toEqual(['a']);
  });
});
