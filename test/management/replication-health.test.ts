// Replication in a node's health: which replicator and store figures make an `ok` node `degraded`, and the HTTP
// answer to a write this replica cannot stamp (hlc_out_of_range: 503, nothing written).
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { PlacementReplicator, PlacementStore, PlacementStoreError } from '../../crdt/index.js';
import { sendError } from '../../src/management/errors.js';
import { replicationHealth } from '../../src/management/replication-health.js';
import { idleReplicator, syncedPeer } from '../support/health-inputs.js';

const stats = idleReplicator;
const peer = syncedPeer;

const storeStats = () => new PlacementStore({ node: 'a', now: () => 1_000 }).stats();

describe('replicationHealth', () => {
  it('has no problem alone or with peers it reaches', () => {
    expect(replicationHealth(stats([]), storeStats()).problems).toEqual([]);
    expect(replicationHealth(stats([peer(), peer({ peer: 'q' })]), storeStats()).problems).toEqual([]);
  });

  it('names the problem when a send to a peer failed, a frame from one was rejected, or updates wait for a missing one', () => {
    expect(
      replicationHealth(stats([peer(), peer({ peer: 'q', lastSendFailed: true })]), storeStats()).problems,
    ).toEqual(['the last send to peer(s) q failed: placements written here may not reach it']);
    expect(replicationHealth(stats([peer({ lastFrameRejected: true })]), storeStats()).problems).toEqual([
      'the last frame from peer(s) p was rejected: placements written there may not reach this node',
    ]);
    expect(replicationHealth(stats([]), { ...storeStats(), awaitingMissingUpdates: true }).problems).toHaveLength(1);
  });

  it('reports what a real replicator and store count', () => {
    const store = new PlacementStore({ node: 'a', now: () => 1_000 });
    const replicator = new PlacementReplicator(
      store,
      { send: () => undefined },
      { setInterval: () => 0, clearInterval: () => undefined },
    );
    replicator.addPeer('b');
    const health = replicationHealth(replicator.stats(), store.stats());
    expect(health).toMatchObject({
      peers: 1,
      syncedPeers: 0,
      peersBehind: 0,
      heldValues: 0,
      awaitingMissingUpdates: false,
      problems: [],
    });
    replicator.close();
  });
});

describe('a write the replica cannot stamp', () => {
  it('is answered 503 hlc_out_of_range; other store errors are 400', async () => {
    const app = Fastify();
    app.setErrorHandler((error: PlacementStoreError, _request, reply) => sendError(reply, error));
    app.post('/clock', async () => {
      throw new PlacementStoreError('hlc_out_of_range', 'the timestamp would pass 2200-01-01');
    });
    app.post('/target', async () => {
      throw new PlacementStoreError('invalid_target', 'bad target');
    });
    const clock = await app.inject({ method: 'POST', url: '/clock' });
    expect(clock.statusCode).toBe(503);
    expect(clock.json()).toEqual({ error: 'hlc_out_of_range', message: 'the timestamp would pass 2200-01-01' });
    expect((await app.inject({ method: 'POST', url: '/target' })).statusCode).toBe(400);
    await app.close();
  });
});
