// A node restarted with an empty replica must not write before it has synced with a peer: its slot for a
// shard may already hold its previous incarnation's value elsewhere, and a blind write to the same slot is
// settled by Yjs client id, not by HLC. These tests pin the wait and its bound.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { compareHlc } from '../../crdt/index.js';
import { run } from '../sharding/harness.js';
import { ExternalCluster, NO_ANTI_ENTROPY, pinsOf, recordsOf } from './harness.js';

const HOUR = 3_600_000;
let cluster: ExternalCluster | undefined;

afterEach(async () => {
  await cluster?.shutdown();
  cluster = undefined;
  vi.useRealTimers();
});

describe('writes on a restarted node', () => {
  it('wait for the first sync, so a new pin beats the previous incarnation even with the clock an hour behind', async () => {
    vi.useFakeTimers();
    cluster = new ExternalCluster({ delayMs: 1, antiEntropyIntervalMs: NO_ANTI_ENTROPY });
    const a = cluster.addNode(7001);
    const b = cluster.addNode(7002);
    await run(50);
    await a.controller.setPlacement(5, b.address);
    await run(50);
    const previous = recordsOf(b)[0]?.hlc;
    expect(previous?.node).toBe(a.key);

    await cluster.stopNode(a);
    const restarted = cluster.startNode(a.address, { now: () => Date.now() - HOUR });
    let written = false;
    const writing = restarted.controller.setPlacement(5, a.address).then(() => (written = true));
    await Promise.resolve();
    expect(written).toBe(false);
    await run(50);
    await writing;
    await run(50);

    for (const node of [restarted, b]) {
      expect(pinsOf(node)).toEqual([[5, a.key]]);
      expect(compareHlc(recordsOf(node)[0]!.hlc, previous!)).toBeGreaterThan(0);
    }
  });

  it('do not wait on a node without peers, and wait at most the bound when no peer answers', async () => {
    vi.useFakeTimers();
    cluster = new ExternalCluster({ delayMs: 1, antiEntropyIntervalMs: NO_ANTI_ENTROPY });
    const alone = cluster.addNode(7001);
    await alone.controller.setPlacement(1, alone.address);
    expect(pinsOf(alone)).toEqual([[1, alone.key]]);

    const cut = cluster.addNode(7002);
    cluster.net.isolate(cut.address);
    let written = false;
    const writing = cut.controller.setPlacement(2, cut.address).then(() => (written = true));
    await run(4_000);
    expect(written).toBe(false);
    await run(1_100);
    await writing;
    expect(pinsOf(cut)).toEqual([[2, cut.key]]);
  });
});
