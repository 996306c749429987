// InboundBudget under any sequence of reservations and releases (fast-check): never more in use than its
// total, in use always the sum of the shares, a trusted holder only ever takes untrusted holders' room and
// only when that makes its frame fit, an untrusted holder never disconnects anyone.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InboundBudget, type BudgetHolder } from '../../src/cluster/transport/inbound-budget.js';

const TOTAL = 1000;

class Holder implements BudgetHolder {
  evictions = 0;
  constructor(
    readonly trusted: boolean,
    private readonly budget: InboundBudget,
  ) {}
  evictForBudget(): void {
    this.evictions++;
    // As a connection does: its end releases its share (the budget has dropped it already).
    this.budget.release(this);
  }
}

const op = fc.oneof(
  fc.record({ kind: fc.constant('reserve' as const), holder: fc.nat(7), bytes: fc.integer({ min: 0, max: 700 }) }),
  fc.record({ kind: fc.constant('release' as const), holder: fc.nat(7) }),
);

describe('InboundBudget', () => {
  it('keeps its invariants and takes room only from untrusted holders, only when it helps', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        fc.array(op, { maxLength: 60 }),
        (trust, ops) => {
          const budget = new InboundBudget(TOTAL);
          const holders = trust.map((trusted) => new Holder(trusted, budget));
          for (const step of ops) {
            const holder = holders[step.holder] as Holder;
            if (step.kind === 'release') {
              budget.release(holder);
            } else {
              const before = holders.map((h) => h.evictions);
              const result = budget.reserve(holder, step.bytes, holder.trusted);
              const evicted = holders.filter((h, i) => h.evictions > (before[i] ?? 0));
              expect(evicted.length).toBe(result.evicted);
              expect(evicted.every((h) => !h.trusted && h !== holder)).toBe(true);
              if (!holder.trusted || !result.granted) expect(result.evicted).toBe(0);
              if (result.granted) expect(budget.heldBy(holder)).toBe(step.bytes);
            }
            expect(budget.inUse).toBeLessThanOrEqual(TOTAL);
            expect(budget.inUse).toBe(holders.reduce((sum, h) => sum + budget.heldBy(h), 0));
            expect(budget.holders).toBe(holders.filter((h) => budget.heldBy(h) > 0).length);
          }
        },
      ),
    );
  });

  it('grants a trusted frame that fits only with the strangers’ room, and refuses one that would not fit even then', () => {
    const budget = new InboundBudget(TOTAL);
    const stranger = new Holder(false, budget);
    const member = new Holder(true, budget);
    const other = new Holder(true, budget);
    expect(budget.reserve(stranger, 600, false)).toEqual({ granted: true, evicted: 0 });
    expect(budget.reserve(other, 300, true)).toEqual({ granted: true, evicted: 0 });
    expect(budget.reserve(member, 800, true)).toEqual({ granted: false, evicted: 0 });
    expect(stranger.evictions).toBe(0);
    expect(budget.reserve(member, 500, true)).toEqual({ granted: true, evicted: 1 });
    expect(budget.inUse).toBe(800);
    expect(budget.reserve(stranger, 300, false)).toEqual({ granted: false, evicted: 0 });
  });
});
