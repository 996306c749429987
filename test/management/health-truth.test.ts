// Issue 27 case 8: a node's health says `degraded`, with the reason, whenever it refuses writes (no majority,
// paused, clock skew), holds values, cannot replicate to or from one peer, or is starved of inbound budget:
// before, it said ok in all of these and turned degraded only for rejected frames from every peer and a
// failed disk.
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { PlacementStore } from '../../crdt/index.js';
import { NodeAddress } from '../../src/cluster/address.js';
import type { ManagementBackend, StorageHealth, WriteAccess } from '../../src/management/backend.js';
import { replicationHealth, type InboundHealth } from '../../src/management/replication-health.js';
import { createManagementServer } from '../../src/management/server.js';
import { MEMORY_STORAGE, idleReplicator, syncedPeer, type ReplicatorPeer } from '../support/health-inputs.js';

type Peer = ReplicatorPeer;

interface Situation {
  access?: WriteAccess;
  peers?: Peer[];
  heldValues?: number;
  inbound?: InboundHealth;
  storageFailure?: string | null;
}

const peer = (name: string, overrides: Partial<Peer> = {}): Peer => syncedPeer({ peer: name, ...overrides });

/** The health route over a backend in `situation`; every other route is unused here. */
function serverIn(situation: Situation): FastifyInstance {
  const peers = situation.peers ?? [peer('b'), peer('c')];
  const replicator = idleReplicator(peers);
  const storage: StorageHealth = { ...MEMORY_STORAGE, failure: situation.storageFailure ?? null };
  const backend: Partial<ManagementBackend> = {
    self: NodeAddress.parse('test@127.0.0.1:40000'),
    health: () => ({ status: 'ok', memberStatus: 'up' }),
    writeAccess: () => situation.access ?? { writable: true },
    entityTypes: () => new Map(),
    replication: () =>
      replicationHealth(
        replicator,
        { ...new PlacementStore({ node: 'a', now: () => 1_000 }).stats(), heldValues: situation.heldValues ?? 0 },
        situation.inbound,
      ),
    placementStore: () => ({ generation: 0, slots: 0, baseSlots: 0, documentItems: 0 }),
    storage: () => storage,
  };
  return createManagementServer({ backend: backend as ManagementBackend, console: false });
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function healthIn(situation: Situation): Promise<{ status: string; reasons: string[] }> {
  app = serverIn(situation);
  const response = await app.inject({ method: 'GET', url: '/actor-ts/health' });
  expect(response.statusCode).toBe(200);
  return response.json<{ status: string; reasons: string[] }>();
}

describe('health tells the truth (issue 27 case 8)', () => {
  it('is ok, with no reasons, when nothing is wrong', async () => {
    expect(await healthIn({})).toMatchObject({ status: 'ok', reasons: [] });
  });

  it.each([
    ['no_majority', 'this node reaches 1 of 3 members, not a majority'],
    ['paused', 'this node was frozen for 12000 ms'],
    ['clock_skew', 'this node holds values ahead of its clock'],
  ] as const)('is degraded while writes are refused with %s, saying so', async (code, reason) => {
    const health = await healthIn({ access: { writable: false, code, reason } });
    expect(health.status).toBe('degraded');
    expect(health.reasons).toEqual([`placement writes are refused (${code}): ${reason}`]);
  });

  it('is degraded when the last send to one peer of two failed, or the last frame from one was rejected, naming the peer', async () => {
    const sending = await healthIn({ peers: [peer('b'), peer('c', { lastSendFailed: true })] });
    expect(sending.status).toBe('degraded');
    expect(sending.reasons.join('\n')).toContain('the last send to peer(s) c failed');
    await app?.close();
    const receiving = await healthIn({ peers: [peer('b', { lastFrameRejected: true }), peer('c')] });
    expect(receiving.status).toBe('degraded');
    expect(receiving.reasons.join('\n')).toContain('the last frame from peer(s) b was rejected');
  });

  it('is degraded while values are held for being too far ahead of the clock', async () => {
    const health = await healthIn({ heldValues: 3 });
    expect(health.status).toBe('degraded');
    expect(health.reasons.join('\n')).toMatch(/3 placement value\(s\) are held/);
  });

  it('is degraded when the transport says inbound frames are starved of budget (the hook the node wires)', async () => {
    const health = await healthIn({ inbound: { starved: true, reason: '40 frames from 2 peers waited for budget' } });
    expect(health.status).toBe('degraded');
    expect(health.reasons).toEqual(['inbound frames are starved of budget: 40 frames from 2 peers waited for budget']);
  });

  it('is degraded when storage failed', async () => {
    const health = await healthIn({ storageFailure: 'the data directory /x is gone' });
    expect(health).toMatchObject({ status: 'degraded', reasons: ['storage: the data directory /x is gone'] });
  });
});
