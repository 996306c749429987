// Large frames over real loopback sockets (issue 40): a hand-off's state chunks, whose encodings may stay in
// msgpackr's working buffer and whose binaries the receiver decodes as views of the frame, arrive byte for byte
// even when many other messages are encoded right after them (before the socket wrote them), and a message sent
// again reuses its frame.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeMessageFrameOnce, messageCodecStats } from '../../src/cluster/transport/message-codec.js';
import { PROTOCOL_VERSION, type WireMessage } from '../../src/cluster/transport/wire-message.js';
import { stateOnWire } from '../../src/sharding/protocol/state-messages.js';
import { silentLogger } from '../../src/logging.js';
import { StateTransfer } from '../../src/sharding/region/state-transfer.js';
import { heartbeat } from './heartbeats.js';
import { TcpTestBed } from './tcp-peers.js';
import { waitFor } from './wait-for.js';

const bed = new TcpTestBed();
afterEach(() => bed.cleanUp());

type Chunk = ReturnType<StateTransfer['outgoing']>[number];

/** A shard's state chunks as a region makes them: `entities` states of `bytes` each, in parts of 256 KiB at most. */
function chunks(entities: number, bytes: number, handOffId: number): Chunk[] {
  const transfer = new StateTransfer({
    typeName: 'Stateful',
    config: {
      maxEntitySnapshotBytes: 1 << 20,
      stateChunkBytes: 256 * 1024,
      maxHandOffStateBytes: 1 << 26,
      handOffTimeoutMs: 60_000,
    },
    logger: silentLogger(),
  });
  const snapshots = Array.from({ length: entities }, (_, i) => ({
    entityId: `entity-${i}`,
    ok: true as const,
    value: { n: i, data: String.fromCharCode(97 + (i % 26)).repeat(bytes) },
  }));
  return transfer.outgoing(7, handOffId, { snapshots });
}

describe('TcpTransport with large frames', () => {
  it('delivers state chunks byte for byte while other messages are encoded behind them, and reuses a resent frame', async () => {
    const [a, b] = await Promise.all([bed.start(), bed.start()]);
    const received: WireMessage[] = [];
    b.onMessage((_from, message) => received.push(message));
    // As a region's link sends them to a peer on this protocol: the packed binary, not the list too.
    const sent = chunks(1_000, 1024, 1);
    const wire = sent.map((chunk) => stateOnWire(chunk, PROTOCOL_VERSION));
    expect(sent.length).toBeGreaterThan(1);
    for (const chunk of wire) {
      a.send(b.self, chunk);
      // Encoded in the same tick, before the socket has written the chunk: they must not write over it.
      for (let i = 0; i < 50; i++) a.send(b.self, heartbeat(i));
    }
    const before = messageCodecStats().encodes;
    a.send(b.self, wire[0] as WireMessage);
    expect(messageCodecStats().encodes).toBe(before);
    // A chunk's packed states are its frame's tail: written as they are, never copied into an encoding.
    const frame = encodeMessageFrameOnce(wire[0] as WireMessage);
    expect(frame.tail).toBe((wire[0] as Chunk).packed);
    expect(frame.head.byteLength).toBeLessThan(256);
    await waitFor(() => received.filter((m) => m.type === 'ShardStateChunk').length === sent.length + 1, 'chunks');
    const arrived = received.filter((m): m is Chunk => m.type === 'ShardStateChunk');
    for (const [i, chunk] of [...sent, sent[0] as Chunk].entries()) {
      const got = arrived[i] as Chunk;
      expect(got.part).toBe(chunk.part);
      expect(got.packed).toBeDefined();
      expect(Buffer.compare(got.packed ?? new Uint8Array(0), chunk.packed ?? new Uint8Array(1))).toBe(0);
      expect(got.entities.map((e) => e.entityId)).toEqual(chunk.entities.map((e) => e.entityId));
    }
  });
});
