// DeathConfirmations on a manual scheduler and a scripted probe: what confirms a death (CONFIRM_REFUSALS
// refusals in a row, CONFIRM_SPACING_MS apart), what voids it (an accepting probe, a sign of life), and what a
// lost connection changes (an at-once suspicion skips the REPROBE_AFTER_MS wait, never a probe under way, and
// probes a first answer that is not a refusal again, CLOSE_REPROBES times at most, CLOSE_REPROBE_DELAYS_MS apart).
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import {
  CONFIRM_REFUSALS,
  CONFIRM_SPACING_MS,
  CONFIRMATION_FRESH_MS,
  CLOSE_REPROBES,
  DeathConfirmations,
  REPROBE_AFTER_MS,
} from '../../src/cluster/membership/death-confirmation.js';
import type { ProbeResult } from '../../src/cluster/transport/transport.js';
import { ManualScheduler } from '../support/schedulers.js';

const peer = NodeAddress.parse('actor-ts://test@127.0.0.1:2552');
const KEY = 'peer#1';

/** A probe that answers from `answers` in order (then `unknown`), recording when each probe was made. */
function scripted(scheduler: ManualScheduler, answers: ProbeResult[]) {
  const probedAt: number[] = [];
  const confirmedAt: number[] = [];
  const deaths = new DeathConfirmations({
    probe: () => {
      probedAt.push(scheduler.now());
      return Promise.resolve(answers.shift() ?? 'unknown');
    },
    scheduler,
    onConfirmed: () => confirmedAt.push(scheduler.now()),
  });
  return { deaths, probedAt, confirmedAt };
}

/** Lets the probes' promises settle, then moves the manual clock. */
async function advance(scheduler: ManualScheduler, ms: number): Promise<void> {
  await Promise.resolve();
  await Promise.resolve();
  scheduler.advance(ms);
  await Promise.resolve();
  await Promise.resolve();
}

describe('DeathConfirmations', () => {
  it('confirms after CONFIRM_REFUSALS refusals, each CONFIRM_SPACING_MS after the last', async () => {
    const scheduler = new ManualScheduler();
    const { deaths, probedAt, confirmedAt } = scripted(scheduler, ['refused', 'refused']);
    const start = scheduler.now();
    deaths.suspect(KEY, peer, true);
    await advance(scheduler, CONFIRM_SPACING_MS);
    await advance(scheduler, 0);
    expect(probedAt).toEqual([start, start + CONFIRM_SPACING_MS]);
    expect(CONFIRM_REFUSALS).toBe(2);
    expect(confirmedAt).toEqual([start + CONFIRM_SPACING_MS]);
    expect(deaths.confirmed(KEY, scheduler.now())).toBe(true);
  });

  it('does not confirm a process back on its port between the probes (a restart accepts)', async () => {
    const scheduler = new ManualScheduler();
    const { deaths, probedAt, confirmedAt } = scripted(scheduler, ['refused', 'accepting']);
    deaths.suspect(KEY, peer, true);
    await advance(scheduler, CONFIRM_SPACING_MS);
    await advance(scheduler, 10 * CONFIRM_SPACING_MS);
    expect(probedAt).toHaveLength(2);
    expect(confirmedAt).toEqual([]);
    expect(deaths.confirmed(KEY, scheduler.now())).toBe(false);
  });

  it('a sign of life between the probes voids the first refusal', async () => {
    const scheduler = new ManualScheduler();
    const { deaths, probedAt, confirmedAt } = scripted(scheduler, ['refused', 'refused', 'refused']);
    deaths.suspect(KEY, peer, true);
    await advance(scheduler, 0);
    deaths.alive(KEY);
    await advance(scheduler, 10 * CONFIRM_SPACING_MS);
    expect(probedAt).toHaveLength(1);
    expect(confirmedAt).toEqual([]);
  });

  it('a lost connection probes at once although a probe was made within REPROBE_AFTER_MS; silence waits', async () => {
    const scheduler = new ManualScheduler();
    const { deaths, probedAt, confirmedAt } = scripted(scheduler, ['accepting', 'refused', 'refused']);
    const start = scheduler.now();
    deaths.suspect(KEY, peer);
    await advance(scheduler, 100);
    // Silence again within REPROBE_AFTER_MS: no new probe.
    deaths.suspect(KEY, peer);
    await advance(scheduler, 0);
    expect(probedAt).toEqual([start]);
    // The connection ended from the peer's side: probe now.
    deaths.suspect(KEY, peer, true);
    await advance(scheduler, CONFIRM_SPACING_MS);
    await advance(scheduler, 0);
    expect(probedAt).toEqual([start, start + 100, start + 100 + CONFIRM_SPACING_MS]);
    expect(confirmedAt).toEqual([start + 100 + CONFIRM_SPACING_MS]);
    expect(start + 100 + CONFIRM_SPACING_MS - start).toBeLessThan(REPROBE_AFTER_MS);
  });

  it('an at-once suspicion never starts a second probe while one is under way or spaced', async () => {
    const scheduler = new ManualScheduler();
    const { deaths, probedAt } = scripted(scheduler, ['refused', 'refused']);
    deaths.suspect(KEY, peer, true);
    deaths.suspect(KEY, peer, true);
    await advance(scheduler, 0);
    deaths.suspect(KEY, peer, true);
    await advance(scheduler, 0);
    expect(probedAt).toHaveLength(1);
    await advance(scheduler, CONFIRM_SPACING_MS);
    expect(probedAt).toHaveLength(2);
  });

  it('confirms the same key again later from fresh refusals (an address restarted and killed again)', async () => {
    // The coordinator keys its confirmations by address: the second death of the same address must be confirmed
    // (and reported) anew, not counted on from the first one's stale refusals.
    const scheduler = new ManualScheduler();
    const { deaths, probedAt, confirmedAt } = scripted(scheduler, ['refused', 'refused', 'refused', 'refused']);
    deaths.suspect(KEY, peer, true);
    await advance(scheduler, CONFIRM_SPACING_MS);
    await advance(scheduler, 0);
    expect(confirmedAt).toHaveLength(1);
    await advance(scheduler, CONFIRMATION_FRESH_MS + 1);
    expect(deaths.confirmed(KEY, scheduler.now())).toBe(false);
    const second = scheduler.now();
    deaths.suspect(KEY, peer, true);
    await advance(scheduler, 0);
    // One refusal after the old ones went stale is not a confirmation.
    expect(confirmedAt).toHaveLength(1);
    expect(deaths.confirmed(KEY, scheduler.now())).toBe(false);
    await advance(scheduler, CONFIRM_SPACING_MS);
    await advance(scheduler, 0);
    expect(probedAt.slice(2)).toEqual([second, second + CONFIRM_SPACING_MS]);
    expect(confirmedAt).toEqual([confirmedAt[0], second + CONFIRM_SPACING_MS]);
    expect(deaths.confirmed(KEY, scheduler.now())).toBe(true);
  });

  /** A first probe accepted, then refusals: probed again at once after the lost connection, confirmed by two. */
  async function acceptThenRefusals(silenceFirst: boolean): Promise<void> {
    const scheduler = new ManualScheduler();
    const { deaths, probedAt, confirmedAt } = scripted(scheduler, ['accepting', 'refused', 'refused']);
    const start = scheduler.now();
    if (silenceFirst) deaths.suspect(KEY, peer);
    deaths.suspect(KEY, peer, true);
    await advance(scheduler, CONFIRM_SPACING_MS);
    await advance(scheduler, CONFIRM_SPACING_MS);
    await advance(scheduler, 0);
    expect(probedAt).toEqual([start, start + CONFIRM_SPACING_MS, start + 2 * CONFIRM_SPACING_MS]);
    expect(confirmedAt).toEqual([start + 2 * CONFIRM_SPACING_MS]);
  }

  it('after a lost connection, a first accept (the dying process still listening) is probed again', () =>
    acceptThenRefusals(false));

  it('a peer that keeps accepting after a lost connection gets CLOSE_REPROBES more probes, as the delays say', async () => {
    const scheduler = new ManualScheduler();
    const { deaths, probedAt, confirmedAt } = scripted(scheduler, Array<ProbeResult>(40).fill('accepting'));
    const start = scheduler.now();
    deaths.suspect(KEY, peer, true);
    for (let i = 0; i < 200; i++) await advance(scheduler, CONFIRM_SPACING_MS);
    // Every 25 ms for 200 ms, then 50, 100, 200 and 400 ms apart: the last 950 ms after the close.
    const offsets = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 14, 22, 38].map((n) => start + n * CONFIRM_SPACING_MS);
    expect(CLOSE_REPROBES).toBe(12);
    expect(probedAt).toEqual(offsets);
    expect(confirmedAt).toEqual([]);
    expect(deaths.confirmed(KEY, scheduler.now())).toBe(false);
  });

  it('after a lost connection, a first answer reset with the dying socket (unknown) is probed again', async () => {
    const scheduler = new ManualScheduler();
    const { deaths, probedAt, confirmedAt } = scripted(scheduler, ['unknown', 'accepting', 'refused', 'refused']);
    const start = scheduler.now();
    deaths.suspect(KEY, peer, true);
    for (let i = 0; i < 5; i++) await advance(scheduler, CONFIRM_SPACING_MS);
    await advance(scheduler, 0);
    // Re-probes 25 ms apart; once refused, the confirmation's own spacing.
    const s = CONFIRM_SPACING_MS;
    expect(probedAt).toEqual([start, start + s, start + 2 * s, start + 3 * s]);
    expect(confirmedAt).toEqual([start + 3 * s]);
  });

  // The silence probe is still under way when the connection ends.
  it('an accept that a lost connection finds under way is probed again', () => acceptThenRefusals(true));

  it('silence alone is not probed again after an accept', async () => {
    const scheduler = new ManualScheduler();
    const { deaths, probedAt } = scripted(scheduler, ['accepting', 'refused', 'refused']);
    deaths.suspect(KEY, peer);
    for (let i = 0; i < 8; i++) await advance(scheduler, CONFIRM_SPACING_MS);
    expect(probedAt).toHaveLength(1);
  });

  it('without a probe nothing is ever confirmed', async () => {
    const scheduler = new ManualScheduler();
    let confirmed = 0;
    const deaths = new DeathConfirmations({ probe: undefined, scheduler, onConfirmed: () => confirmed++ });
    deaths.suspect(KEY, peer, true);
    await advance(scheduler, 10 * CONFIRM_SPACING_MS);
    expect(confirmed).toBe(0);
    expect(deaths.confirmed(KEY, scheduler.now())).toBe(false);
  });
});
