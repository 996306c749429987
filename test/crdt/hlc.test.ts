// Hybrid logical clock: ordering, successor, tick/receive cases, counter carry, drift refusal, bad input.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  HybridLogicalClock,
  MAX_HLC_COUNTER,
  PlacementStoreError,
  compareHlc,
  successor,
  type Hlc,
} from '../../crdt/index.js';

const hlcArb = fc.record({
  wallMs: fc.integer({ min: 0, max: 2 ** 48 }),
  counter: fc.integer({ min: 0, max: MAX_HLC_COUNTER }),
  node: fc.constantFrom('a', 'b', 'node-c'),
});

describe('compareHlc', () => {
  it('orders by wallMs, then counter, then node', () => {
    expect(compareHlc({ wallMs: 1, counter: 9, node: 'z' }, { wallMs: 2, counter: 0, node: 'a' })).toBeLessThan(0);
    expect(compareHlc({ wallMs: 2, counter: 1, node: 'a' }, { wallMs: 2, counter: 0, node: 'z' })).toBeGreaterThan(0);
    expect(compareHlc({ wallMs: 2, counter: 1, node: 'a' }, { wallMs: 2, counter: 1, node: 'b' })).toBeLessThan(0);
    expect(compareHlc({ wallMs: 2, counter: 1, node: 'a' }, { wallMs: 2, counter: 1, node: 'a' })).toBe(0);
  });

  it('is a total order: antisymmetric and transitive', () => {
    fc.assert(
      fc.property(hlcArb, hlcArb, hlcArb, (a, b, c) => {
        // A sum, not a negation: -0 and +0 differ for toBe, and equal stamps compare as 0 both ways.
        expect(Math.sign(compareHlc(a, b)) + Math.sign(compareHlc(b, a))).toBe(0);
        if (compareHlc(a, b) <= 0 && compareHlc(b, c) <= 0) expect(compareHlc(a, c)).toBeLessThanOrEqual(0);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps timestamps beyond 2^53 distinct (no packing into one number)', () => {
    const a = { wallMs: 2 ** 48, counter: 1, node: 'a' };
    const b = { wallMs: 2 ** 48, counter: 2, node: 'a' };
    expect(compareHlc(a, b)).toBeLessThan(0);
  });
});

describe('successor', () => {
  it('is the next counter step of the writing node, carrying into wallMs at 65535', () => {
    expect(successor({ wallMs: 10, counter: 3, node: 'b' }, 'a')).toEqual({ wallMs: 10, counter: 4, node: 'a' });
    expect(successor({ wallMs: 10, counter: MAX_HLC_COUNTER, node: 'b' }, 'a')).toEqual({
      wallMs: 11,
      counter: 0,
      node: 'a',
    });
  });

  it('is always strictly greater, whatever the writer name', () => {
    fc.assert(
      fc.property(hlcArb, fc.constantFrom('a', 'b', 'zzz'), (h, node) => {
        expect(compareHlc(successor(h, node), h)).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });
});

describe('HybridLogicalClock', () => {
  it('tick follows the wall clock and counts within one millisecond', () => {
    let now = 1000;
    const clock = new HybridLogicalClock('a', { now: () => now });
    expect(clock.tick()).toEqual({ wallMs: 1000, counter: 0, node: 'a' });
    expect(clock.tick()).toEqual({ wallMs: 1000, counter: 1, node: 'a' });
    now = 1005;
    expect(clock.tick()).toEqual({ wallMs: 1005, counter: 0, node: 'a' });
    now = 900; // the wall clock stepped back: the HLC does not
    expect(clock.tick()).toEqual({ wallMs: 1005, counter: 1, node: 'a' });
  });

  it('carries counter overflow into wallMs', () => {
    const clock = new HybridLogicalClock('a', { now: () => 7 });
    clock.receive({ wallMs: 7, counter: MAX_HLC_COUNTER - 1, node: 'b' });
    expect(clock.tick()).toEqual({ wallMs: 8, counter: 0, node: 'a' });
    expect(clock.tick()).toEqual({ wallMs: 8, counter: 1, node: 'a' });
  });

  it('receive follows the paper: max of local, remote and wall clock, with the counter cases', () => {
    let now = 100;
    const clock = new HybridLogicalClock('a', { now: () => now });
    expect(clock.receive({ wallMs: 150, counter: 4, node: 'b' })).toEqual({ wallMs: 150, counter: 5, node: 'a' });
    expect(clock.receive({ wallMs: 150, counter: 9, node: 'b' })).toEqual({ wallMs: 150, counter: 10, node: 'a' });
    expect(clock.receive({ wallMs: 120, counter: 50, node: 'b' })).toEqual({ wallMs: 150, counter: 11, node: 'a' });
    now = 200;
    expect(clock.receive({ wallMs: 120, counter: 50, node: 'b' })).toEqual({ wallMs: 200, counter: 0, node: 'a' });
  });

  it('never goes backwards over any mix of ticks, receives and wall clock jumps', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('tick' as const), now: fc.integer({ min: 0, max: 10_000 }) }),
            fc.record({
              kind: fc.constant('receive' as const),
              now: fc.integer({ min: 0, max: 10_000 }),
              remote: hlcArb.map((h) => ({ ...h, wallMs: h.wallMs % 12_000 })),
            }),
          ),
          { maxLength: 40 },
        ),
        (steps) => {
          let now = 0;
          const clock = new HybridLogicalClock('a', { now: () => now, maxDriftMs: 1000 });
          let last: Hlc | undefined;
          for (const step of steps) {
            now = step.now;
            const next = step.kind === 'tick' ? clock.tick() : clock.receive(step.remote);
            if (last !== undefined) expect(compareHlc(next, last)).toBeGreaterThan(0);
            if (step.kind === 'receive' && step.remote.wallMs - now <= 1000) {
              expect(compareHlc(next, { ...step.remote, node: 'a' })).toBeGreaterThan(0);
            }
            last = next;
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('does not move for a remote timestamp more than maxDriftMs ahead, and reports it', () => {
    const drifts: Hlc[] = [];
    const clock = new HybridLogicalClock('a', {
      now: () => 1_000,
      maxDriftMs: 500,
      onDrift: (remote) => drifts.push(remote),
    });
    const far = { wallMs: 1_501, counter: 0, node: 'b' };
    expect(clock.receive(far)).toEqual({ wallMs: 1_000, counter: 0, node: 'a' });
    expect(clock.tick()).toEqual({ wallMs: 1_000, counter: 1, node: 'a' });
    expect(drifts).toEqual([far]);
    // exactly at the limit is still accepted
    expect(clock.receive({ wallMs: 1_500, counter: 0, node: 'b' })).toEqual({ wallMs: 1_500, counter: 1, node: 'a' });
  });

  it('uses a 60 s drift limit by default', () => {
    const drifts: Hlc[] = [];
    const clock = new HybridLogicalClock('a', { now: () => 0, onDrift: (r) => drifts.push(r) });
    clock.receive({ wallMs: 60_000, counter: 0, node: 'b' });
    clock.receive({ wallMs: 120_001, counter: 0, node: 'b' });
    expect(drifts.map((d) => d.wallMs)).toEqual([120_001]);
  });

  it('rejects bad names, options and remote timestamps without changing state', () => {
    const clock = new HybridLogicalClock('a', { now: () => 5 });
    for (const bad of [
      { wallMs: -1, counter: 0, node: 'b' },
      { wallMs: 1.5, counter: 0, node: 'b' },
      { wallMs: 1, counter: MAX_HLC_COUNTER + 1, node: 'b' },
      { wallMs: 1, counter: 0, node: '' },
      null,
    ]) {
      expect(() => clock.receive(bad as unknown as Hlc)).toThrow(expect.objectContaining({ code: 'invalid_hlc' }));
    }
    expect(clock.tick()).toEqual({ wallMs: 5, counter: 0, node: 'a' });
    expect(() => new HybridLogicalClock('')).toThrow(PlacementStoreError);
    expect(() => new HybridLogicalClock('a\u0000b')).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    expect(() => new HybridLogicalClock('a', { maxDriftMs: -1 })).toThrow(
      expect.objectContaining({ code: 'invalid_option' }),
    );
    expect(() => new HybridLogicalClock('a', { now: () => Number.NaN }).tick()).toThrow(
      expect.objectContaining({ code: 'invalid_option' }),
    );
  });
});
