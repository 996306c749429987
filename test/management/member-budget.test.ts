// Issue 27 case 5 on two real nodes (in-process, real TCP, default budgets, no cluster secret): four strangers
// that completed the handshake hold almost all of node B's 64 MiB inbound budget in partial 16 MiB frames.
// A's bulk placement writes must still replicate to B, because the node trusts its members in the budget;
// they used to be refused over the budget until the strangers let go (0 of 4 in 60 s).
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/node/node.js';
import { authenticatedSocket } from '../cluster/raw-peer.js';
import { frameHeader } from '../cluster/tcp-peers.js';
import { COUNTER, pollUntil, startTestCluster, stopAll } from './node-fixture.js';

const MiB = 1024 * 1024;

describe('a member’s replication while strangers hold the inbound budget', () => {
  let a: RunningNode;
  let b: RunningNode;
  const strangers: Socket[] = [];
  beforeAll(async () => {
    [a, b] = (await startTestCluster(2)) as [RunningNode, RunningNode];
  });
  afterAll(async () => {
    for (const socket of strangers) socket.destroy();
    await stopAll([a, b]);
  });

  it('replicates four bulk writes to the node under attack, disconnecting strangers for them', async () => {
    // One buffer for all four: what is written is referenced, not copied.
    const body = Buffer.alloc(16 * MiB - 256);
    for (let i = 0; i < 4; i++) {
      const socket = await authenticatedSocket({
        port: b.address.port,
        to: b.address.toString(),
        from: `raw@127.0.0.1:${45_000 + i}`,
      });
      socket.on('error', () => undefined);
      strangers.push(socket);
      socket.write(Buffer.concat([frameHeader(16 * MiB), body.subarray(0, 1024)]));
      socket.write(body.subarray(1024));
    }
    await pollUntil(
      async () => b.transport.usage().inboundBufferedBytes >= 64 * MiB - 1024,
      'the strangers holding B’s budget',
    );

    const target = a.address.toString();
    // About 90 KB each: the update frames arrive in several reads, so each needs room in B's budget.
    for (let write = 0; write < 4; write++) {
      const placements = Array.from({ length: 200 }, (_, i) => ({
        shardId: write * 200 + i,
        target,
        reason: `bulk write ${write} of shard ${i}: ${'x'.repeat(400)}`,
      }));
      const response = await fetch(`${a.httpUrl}${COUNTER}/placements`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ placements }),
      });
      expect(response.status).toBe(202);
    }
    await pollUntil(
      async () => {
        const answer = (await (await fetch(`${b.httpUrl}${COUNTER}/placements`)).json()) as { placements: unknown[] };
        return answer.placements.length === 800;
      },
      'all four bulk writes on B',
      10_000,
    );
    expect(b.transport.stats()).toMatchObject({ inboundStarved: 0 });
    expect(b.transport.stats().peersDisconnectedForBudget).toBeGreaterThanOrEqual(1);
  });
});
