// TcpTransport over real loopback sockets against hostile peers, most of them past the handshake: frames too
// large for an unauthenticated peer, frames left unfinished, the inbound byte budgets per connection and in
// total, the log lines a flood of refusals costs, and a structured-clone reference bomb.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFrame } from '../../src/cluster/transport/frame-codec.js';
import { encodeValue } from '../../src/cluster/transport/message-codec.js';
import { captureLogger } from '../../src/logging.js';
import type { ProtocolMessage } from '../../src/protocol.js';
import { heartbeat, receivedHeartbeats } from './heartbeats.js';
import { TcpTestBed, frameHeader } from './tcp-peers.js';
import { waitFor } from './wait-for.js';

const bed = new TcpTestBed();
afterEach(() => bed.cleanUp());

describe('TcpTransport against hostile peers', () => {
  it('refuses a large frame before the handshake at its header, long before the handshake deadline', async () => {
    const b = await bed.start({ handshakeTimeoutMs: 600_000, maxHandshakeFrameBytes: 1024 });
    const raw = await bed.client(b.self.port);
    // Far below maxFrameBytes (16 MiB): an unauthenticated peer used to get all of it buffered and decoded.
    raw.socket.write(Buffer.concat([frameHeader(64 * 1024, 1), Buffer.alloc(1000)]));
    await waitFor(() => raw.closed(), 'pre-handshake frame refused');
    expect(b.stats()).toMatchObject({ frameErrors: 1, handshakeFailures: 0 });
  });

  it('accepts full-size frames once the peer is authenticated', async () => {
    const a = await bed.start({ secret: 's', maxHandshakeFrameBytes: 256 });
    const b = await bed.start({ secret: 's', maxHandshakeFrameBytes: 256 });
    const got: number[] = [];
    b.onMessage((_from, message) => {
      if (message.type === 'PlacementUpdate')
        got.push((message as Extract<ProtocolMessage, { type: 'PlacementUpdate' }>).update.byteLength);
    });
    a.send(b.self, { type: 'PlacementUpdate', update: new Uint8Array(100_000) });
    await waitFor(() => got.length === 1, 'large message after the handshake');
    expect(got).toEqual([100_000]);
  });

  it('closes an authenticated connection that stops in the middle of a frame', async () => {
    const b = await bed.start({ secret: 'k', frameTimeoutMs: 50 });
    const peer = await bed.peer(b, { secret: 'k' });
    peer.socket.write(Buffer.concat([frameHeader(1024 * 1024, 2), Buffer.alloc(10)]));
    await waitFor(() => peer.closed(), 'stalled frame timed out', 10_000);
    expect(b.stats()).toMatchObject({ frameTimeouts: 1, frameErrors: 0 });
  });

  it('lets a peer finish frame after frame, each on its own clock', async () => {
    const b = await bed.start({ frameTimeoutMs: 5_000 });
    const atB = receivedHeartbeats(b);
    const peer = await bed.peer(b);
    const frame = encodeFrame('message', encodeValue(heartbeat(1)));
    // Half a frame, then the rest together with the next frame: both complete, nothing times out.
    peer.socket.write(frame.subarray(0, 5));
    peer.socket.write(Buffer.concat([frame.subarray(5), encodeFrame('message', encodeValue(heartbeat(2)))]));
    await waitFor(() => atB.length === 2, 'both frames delivered');
    expect(b.stats()).toMatchObject({ frameTimeouts: 0, inboundOverBudget: 0 });
    expect(peer.closed()).toBe(false);
  });

  it('bounds what one connection and all connections together may hold in incomplete frames', async () => {
    const b = await bed.start({
      maxInboundBytesPerConnection: 48 * 1024,
      maxInboundBufferedBytes: 64 * 1024,
      frameTimeoutMs: 600_000,
    });
    const big = await bed.peer(b);
    big.socket.write(Buffer.concat([frameHeader(1024 * 1024, 2), Buffer.alloc(50 * 1024)]));
    await waitFor(() => big.closed(), 'over the per-connection budget');
    expect(b.stats().inboundOverBudget).toBe(1);

    const first = await bed.peer(b);
    first.socket.write(Buffer.concat([frameHeader(1024 * 1024, 2), Buffer.alloc(40 * 1024)]));
    await waitFor(() => b.stats().frameTimeouts === 0 && !first.closed(), 'first partial frame held');
    const second = await bed.peer(b);
    second.socket.write(Buffer.concat([frameHeader(1024 * 1024, 2), Buffer.alloc(40 * 1024)]));
    await waitFor(() => second.closed(), 'over the total budget');
    expect(b.stats().inboundOverBudget).toBe(2);
    expect(first.closed()).toBe(false);

    // Closing the first connection returns its bytes to the budget: a third peer may hold as much again.
    first.socket.destroy();
    await waitFor(() => first.closed(), 'first closed');
    const atB = receivedHeartbeats(b);
    const third = await bed.peer(b);
    const frame = encodeFrame('message', encodeValue({ type: 'PlacementUpdate', update: new Uint8Array(40 * 1024) }));
    third.socket.write(frame.subarray(0, 41 * 1024));
    third.socket.write(frame.subarray(41 * 1024));
    third.socket.write(encodeFrame('message', encodeValue(heartbeat(3))));
    await waitFor(() => atB.length === 1, 'third peer served');
    expect(b.stats().inboundOverBudget).toBe(2);
  });

  it('writes one log line per kind and peer host per interval however many refusals a peer causes', async () => {
    const log = captureLogger('warn');
    const b = await bed.start({ logger: log.logger });
    const clients = await Promise.all(Array.from({ length: 30 }, () => bed.client(b.self.port)));
    for (const client of clients) client.socket.write(Buffer.from('GET / HTTP/1.1\r\n\r\n'));
    await waitFor(() => clients.every((c) => c.closed()), 'all refused');
    expect(b.stats().frameErrors).toBe(30);
    const lines = log.records.filter((r) => r.msg === 'closing inbound connection after a bad frame');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ host: expect.stringMatching(/127\.0\.0\.1$/), code: 'frame_too_large' });
  });

  it('drops a structured-clone reference bomb from an authenticated peer without decoding it', async () => {
    const log = captureLogger('warn');
    const b = await bed.start({ secret: 'k', logger: log.logger });
    const atB = receivedHeartbeats(b);
    const peer = await bed.peer(b, { secret: 'k' });
    let node: unknown = ['leaf'];
    for (let i = 0; i < 26; i++) node = [node, node];
    const { Packr } = await import('msgpackr');
    const bomb = new Packr({ structuredClone: true }).pack({
      type: 'EntityEnvelope',
      typeName: 'Counter',
      shardId: 1,
      entityId: 'e',
      payload: node,
      hops: 0,
    });
    peer.socket.write(Buffer.concat([encodeFrame('message', bomb), encodeFrame('message', encodeValue(heartbeat(7)))]));
    await waitFor(() => atB.length === 1, 'the next message still delivered');
    expect(b.stats()).toMatchObject({ malformed: 1, delivered: 1 });
    const line = log.records.find((r) => r.msg === 'dropping malformed message');
    expect(line?.['reason']).toBe('extension types are not part of the protocol');
    expect(JSON.stringify(log.records).length).toBeLessThan(5_000);
  });
});
