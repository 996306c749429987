// Issue 27 case 3 over real TCP between CLI node processes: a peer that is not a member sends one well-formed
// PlacementUpdate of generation 2^53-1. It used to move every replica there, and after the next compaction
// every frame from every peer was rejected ("impossible generation"); now it is rejected, and the nodes go on
// compacting and replicating.
import { describe, expect, it } from 'vitest';
import { PlacementStore } from '../../crdt/index.js';
import { decodeWireUpdate, encodeWireUpdate } from '../../crdt/wire.js';
import { encodeFrame } from '../../src/cluster/transport/frame-codec.js';
import { encodeValue } from '../../src/cluster/transport/message-codec.js';
import { authenticatedSocket } from '../cluster/raw-peer.js';
import { SHARDS_PATH, useProcessSet, waitFor, type NodeProc, type PlacementRow } from './harness.js';

const procs = useProcessSet();

interface Health {
  readonly placementStore: { readonly generation: number };
  readonly replication: { readonly framesRejected: number };
}

function poisonedUpdate(): Uint8Array {
  const source = new PlacementStore({ node: 'mallory@127.0.0.1:1' });
  let update: Uint8Array | undefined;
  source.onUpdate((bytes) => (update = bytes));
  source.set('Counter', 1, 'app@127.0.0.1:9');
  return encodeWireUpdate(Number.MAX_SAFE_INTEGER, undefined, decodeWireUpdate(update as Uint8Array, 1_000).doc);
}

describe('generation poisoning over TCP (issue 27 case 3)', () => {
  it('one forged update of generation 2^53-1 from a non-member is rejected; the nodes keep compacting and replicating', async () => {
    const nodes = await procs.startCluster(3, { compactAfterItems: 100 });
    const target = nodes[0] as NodeProc;
    const socket = await authenticatedSocket({
      port: target.port,
      to: target.address,
      from: 'mallory@127.0.0.1:1',
      incarnation: 'poison',
    });
    socket.on('error', () => undefined);
    socket.resume();
    socket.write(encodeFrame('message', encodeValue({ type: 'PlacementUpdate', update: poisonedUpdate() })));
    await waitFor(
      'the forged frame rejected',
      async () => (await target.get<Health>('/actor-ts/health')).body.replication.framesRejected >= 1,
      15_000,
    );
    socket.destroy();
    for (const node of nodes)
      expect((await node.get<Health>('/actor-ts/health')).body.placementStore.generation).toBeLessThan(2);

    // Overwrites through every node compact the stores; every node still takes every other node's writes.
    const last = new Map<number, string>();
    for (let round = 0; round < 8; round++) {
      const via = nodes[round % 3] as NodeProc;
      const placements = Array.from({ length: 20 }, (_, shardId) => ({
        shardId,
        target: (nodes[(shardId + round) % 3] as NodeProc).address,
      }));
      expect((await via.post(`${SHARDS_PATH}/placements`, { placements })).status).toBe(202);
      for (const { shardId, target: to } of placements) last.set(shardId, to);
      await waitFor(
        `round ${round} everywhere`,
        async () => (await Promise.all(nodes.map((node) => node.placements()))).every((rows) => same(rows, last)),
        15_000,
      );
    }
    for (const node of nodes) {
      const generation = (await node.get<Health>('/actor-ts/health')).body.placementStore.generation;
      expect(generation).toBeGreaterThanOrEqual(1);
      expect(generation).toBeLessThan(100);
    }
  });
});

function same(rows: readonly PlacementRow[], expected: ReadonlyMap<number, string>): boolean {
  return rows.length === expected.size && rows.every((row) => expected.get(row.shardId) === row.target);
}
