// "rejected placement sync frame" lines are aggregated per peer and error code like the transport's per-peer
// lines: 900 bad frames from one peer were 900 lines (273 KB).
import { afterEach, describe, expect, it } from 'vitest';
import type { PlacementLogEvent } from '../../crdt/index.js';
import { testAddress } from '../support/members.js';
import { forgedCluster, type ForgedCluster } from './forged-harness.js';

let cluster: ForgedCluster | undefined;
afterEach(() => cluster?.close());

describe('rejected frame lines (issue 27)', () => {
  it('900 bad frames from one peer make one line per interval, which says how many it stands for', () => {
    const events: PlacementLogEvent[] = [];
    const clock = { t: 0 };
    cluster = forgedCluster(2, {
      log: (event) => events.push(event),
      peerLog: { intervalMs: 10_000, now: () => clock.t },
    });
    const target = cluster.addresses[0] as ReturnType<typeof testAddress>;
    const mallory = cluster.forger(testAddress(41_997));
    const garbage = new Uint8Array([1, 2, 3, 4, 5]);
    for (let i = 0; i < 900; i++) mallory(target, { type: 'PlacementUpdate', update: garbage });
    const rejected = () => events.filter((e) => e.message.startsWith('rejected placement sync frame'));
    expect(cluster.replications[0]?.stats().framesRejected).toBe(900);
    expect(rejected()).toHaveLength(1);
    clock.t = 10_000;
    mallory(target, { type: 'PlacementUpdate', update: garbage });
    expect(rejected()).toHaveLength(2);
    expect((rejected()[1]?.details as { similarSinceLastLine?: number }).similarSinceLastLine).toBe(899);
    // Another peer's bad frame is its own line.
    cluster.forger(testAddress(41_996))(target, { type: 'PlacementUpdate', update: garbage });
    expect(rejected()).toHaveLength(3);
  });
});
