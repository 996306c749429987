// Every way an inbound connection ends gives back what it held, on real sockets: its buffered bytes and its
// budget share, and its entries in every registry of the transport (issue 29). Connections the node closed
// itself (over budget, past the frame deadline, after a bad frame) used to stay registered with their partial
// frames, so a few rounds of peers abandoning frames grew the process by hundreds of megabytes.
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFrame } from '../../src/cluster/transport/frame-codec.js';
import { handshakeFrame } from '../../src/cluster/transport/handshake.js';
import { encodeValue } from '../../src/cluster/transport/message-codec.js';
import type { TcpTransport } from '../../src/cluster/transport/tcp-transport.js';
import { heartbeat } from './heartbeats.js';
import { authenticatedSocket } from './raw-peer.js';
import { RELEASED, TcpTestBed, expectReleased, frameHeader, partialFrame, type RawPeer } from './tcp-peers.js';
import { waitFor } from './wait-for.js';

const bed = new TcpTestBed();
afterEach(() => bed.cleanUp());

const N = 5;
const MiB = 1024 * 1024;

async function peers(target: TcpTransport, count = N): Promise<RawPeer[]> {
  return Promise.all(Array.from({ length: count }, () => bed.peer(target)));
}

/** Connections that never say a word; `closed` once the node closed them. */
function silentDiallers(target: TcpTransport): Array<{ closed: boolean }> {
  return Array.from({ length: N }, () => {
    const state = { closed: false };
    const socket = bed.adopt(connect({ host: '127.0.0.1', port: target.self.port }));
    socket.on('error', () => undefined);
    socket.on('close', () => (state.closed = true));
    socket.resume();
    return state;
  });
}

/** Each peer holds `sent` bytes of a 1 MiB frame; resolves once the transport accounts for all of them. */
async function holding(target: TcpTransport, list: RawPeer[], sent: number): Promise<void> {
  for (const peer of list) partialFrame(peer, MiB, sent);
  const expected = list.length * (sent + 6);
  await waitFor(() => target.usage().inboundBufferedBytes === expected, `${list.length} partial frames held`);
}

describe('an inbound connection that ends releases its buffers, its budget share and its registry entries', () => {
  it('when the peer closes it mid-frame', async () => {
    const b = await bed.start({ frameTimeoutMs: 600_000 });
    const list = await peers(b);
    await holding(b, list, 100 * 1024);
    expect(b.usage()).toMatchObject({ budgetHolders: N, inboundByPeer: N, connections: { 'inbound-open': N } });
    for (const peer of list) peer.socket.destroy();
    await expectReleased(b, 'peers closed');
  });

  it('when the node closes it over the per-connection or the shared budget', async () => {
    const b = await bed.start({
      maxInboundBytesPerConnection: 48 * 1024,
      maxInboundBufferedBytes: 64 * 1024,
      frameTimeoutMs: 600_000,
    });
    const overOwn = await peers(b);
    for (const peer of overOwn) partialFrame(peer, MiB, 50 * 1024);
    await waitFor(() => overOwn.every((p) => p.closed()), 'over the per-connection budget');
    await expectReleased(b, 'closed over the per-connection budget');

    const first = await bed.peer(b);
    await holding(b, [first], 40 * 1024);
    const overShared = await peers(b);
    for (const peer of overShared) partialFrame(peer, MiB, 40 * 1024);
    await waitFor(() => overShared.every((p) => p.closed()), 'over the shared budget');
    expect(b.usage()).toMatchObject({ inboundBufferedBytes: 40 * 1024 + 6, budgetHolders: 1, inboundByPeer: 1 });
    expect(b.stats().inboundOverBudget).toBe(2 * N);
    first.socket.destroy();
    await expectReleased(b, 'closed over the shared budget');
  });

  it('when the node closes it past the frame deadline', async () => {
    const b = await bed.start({ frameTimeoutMs: 100 });
    const list = await peers(b);
    for (const peer of list) partialFrame(peer, MiB, 100 * 1024);
    await waitFor(() => list.every((p) => p.closed()), 'stalled frames timed out');
    expect(b.stats().frameTimeouts).toBe(N);
    await expectReleased(b, 'closed past the deadline');
  });

  it('past the deadline of a frame begun in the read that completed the one before', async () => {
    const b = await bed.start({ frameTimeoutMs: 100 });
    const [peer] = await peers(b, 1);
    if (peer === undefined) throw new Error('no peer');
    const first = encodeFrame('message', encodeValue(heartbeat(1)));
    // The first frame's clock starts with its first half; the read that completes it begins the next frame.
    peer.socket.write(first.subarray(0, 8));
    await waitFor(() => b.usage().inboundBufferedBytes === 8, 'half a frame held');
    peer.socket.write(Buffer.concat([first.subarray(8), frameHeader(MiB), Buffer.alloc(1024)]));
    await waitFor(() => b.usage().inboundBufferedBytes === 1024 + 6, 'the next frame begun');
    await waitFor(() => peer.closed(), 'the next frame timed out');
    expect(b.stats().frameTimeouts).toBe(1);
    await expectReleased(b, 'closed past the deadline of the next frame');
  });

  it('when the node closes it after a bad frame or a handshake frame on the open connection', async () => {
    const b = await bed.start({ frameTimeoutMs: 600_000 });
    const list = await peers(b, 2 * N);
    const complete = encodeFrame('message', encodeValue(heartbeat(1)));
    list.forEach((peer, i) => {
      // A whole frame, then the start of one whose header is bad: wrong version, or a handshake on an open link.
      const bad = i % 2 === 0 ? frameHeader(1000, 2, 99) : handshakeFrame({ t: 'Proof' });
      peer.socket.write(Buffer.concat([complete, bad]));
    });
    await waitFor(() => list.every((p) => p.closed()), 'bad frames refused');
    expect(b.stats()).toMatchObject({ frameErrors: N, handshakeFailures: N, delivered: 2 * N });
    await expectReleased(b, 'closed after a bad frame');
  });

  it('when the handshake fails: a wrong secret, a wrong address, no handshake at all', async () => {
    const b = await bed.start({ secret: 'right', handshakeTimeoutMs: 200 });
    const attempts = Array.from({ length: N }, (_, i) =>
      authenticatedSocket({
        port: b.self.port,
        to: b.self.toString(),
        from: `raw@127.0.0.1:${41_000 + i}`,
        secret: 'wrong',
      }),
    );
    attempts.push(
      authenticatedSocket({ port: b.self.port, to: 'test@127.0.0.1:1', from: 'raw@127.0.0.1:42000', secret: 'right' }),
    );
    const outcomes = await Promise.allSettled(attempts);
    expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason).includes('refused') : false))).toEqual(
      outcomes.map(() => true),
    );
    const silent = silentDiallers(b);
    await waitFor(() => silent.every((s) => s.closed), 'silent diallers timed out');
    expect(b.stats().handshakeFailures).toBe(2 * N + 1);
    await expectReleased(b, 'refused handshakes');
  });

  it('when a new connection from the same peer replaces it, with or without a new incarnation', async () => {
    const b = await bed.start({ frameTimeoutMs: 600_000 });
    const from = 'raw@127.0.0.1:43000';
    const replaced: RawPeer[] = [];
    for (let i = 0; i < N; i++) {
      const peer = await bed.peer(b, { from, incarnation: i % 2 === 0 ? 'same' : `new-${i}` });
      await waitFor(() => replaced.every((p) => p.closed()), 'older connections dropped');
      await holding(b, [peer], 10 * 1024 * (i + 1));
      expect(b.usage()).toMatchObject({
        budgetHolders: 1,
        inboundByPeer: 1,
        peerIncarnations: 1,
        connections: { 'inbound-open': 1 },
      });
      replaced.push(peer);
    }
    replaced.at(-1)?.socket.destroy();
    await expectReleased(b, 'the last connection closed');
  });

  it('when the dialling side replaces a stalled link (reconnect), on both ends', async () => {
    const a = await bed.start({ redialMinAgeMs: 0 });
    const b = await bed.start();
    let delivered = 0;
    b.onMessage(() => delivered++);
    for (let i = 1; i <= N; i++) {
      a.send(b.self, heartbeat(i));
      await waitFor(() => delivered === i, `heartbeat ${i}`);
      a.reconnect(b.self);
    }
    a.send(b.self, heartbeat(N + 1));
    await waitFor(() => delivered === N + 1, 'delivered on the last connection');
    await waitFor(
      () => b.usage().connections['inbound-open'] === 1 && b.usage().sockets === 1,
      'one inbound connection left',
    );
    expect(a.usage()).toMatchObject({ sockets: 1, connections: { 'outbound-open': 1, 'outbound-connecting': 0 } });
    expect(b.usage()).toMatchObject({ sockets: 1, inboundByPeer: 1, budgetHolders: 0, inboundBufferedBytes: 0 });
    await a.close();
    await expectReleased(b, 'the dialler closed');
  });

  it('when the transport closes: partial frames, open and handshaking connections', async () => {
    const b = await bed.start({ frameTimeoutMs: 600_000, handshakeTimeoutMs: 600_000 });
    await holding(b, await peers(b), 100 * 1024);
    silentDiallers(b);
    await waitFor(() => b.usage().connections['inbound-handshaking'] === N, 'handshaking connections accepted');
    await b.close();
    expect(b.usage()).toEqual(RELEASED);
  });
});
