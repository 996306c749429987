// Health's view of the inbound budget: starved while members' frames were refused within the window, and why.
import { describe, expect, it } from 'vitest';
import { inboundHealthOf } from '../../src/node/inbound-health.js';

describe('inboundHealthOf', () => {
  it('is starved from the refusal of a member frame until the window has passed without another', () => {
    let clock = 0;
    const counters = { inboundStarved: 0, peersDisconnectedForBudget: 0 };
    const health = inboundHealthOf(
      () => counters,
      60_000,
      () => clock,
    );
    expect(health()).toEqual({ starved: false });
    counters.inboundStarved = 2;
    counters.peersDisconnectedForBudget = 3;
    clock = 1_000;
    expect(health()).toMatchObject({ starved: true, reason: expect.stringContaining('3 strangers') });
    clock = 61_000;
    expect(health().starved).toBe(true);
    clock = 61_001;
    expect(health()).toEqual({ starved: false });
    counters.inboundStarved = 3;
    expect(health().starved).toBe(true);
  });

  it('does not count refusals from before it started watching', () => {
    const health = inboundHealthOf(
      () => ({ inboundStarved: 5, peersDisconnectedForBudget: 0 }),
      60_000,
      () => 0,
    );
    expect(health()).toEqual({ starved: false });
  });
});
