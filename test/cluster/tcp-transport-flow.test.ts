// TcpTransport over real loopback sockets when the peer is slow or gone: the queue for an unreachable peer is
// bounded, a peer that stops reading costs dropped messages rather than memory, the backoff grows against a peer
// that drops every connection (and resets after one that stayed open), a restarted peer gets what was queued,
// and bad options are refused before anything is bound.
import { randomBytes } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { FrameDecoder, encodeFrame } from '../../src/cluster/transport/frame-codec.js';
import { readHandshake } from '../../src/cluster/transport/handshake.js';
import { encodeValue } from '../../src/cluster/transport/message-codec.js';
import { TcpTransport } from '../../src/cluster/transport/tcp-transport.js';
import { captureLogger } from '../../src/logging.js';
import { heartbeat, receivedHeartbeats } from './heartbeats.js';
import { TcpTestBed } from './tcp-peers.js';
import { waitFor } from './wait-for.js';

const bed = new TcpTestBed();
afterEach(() => bed.cleanUp());

/**
 * A raw peer that completes the accepting side of the handshake (no secret) as a TcpTransport would, then hands
 * the open socket to `onOpen` to misbehave with; it never reads messages.
 */
async function handshakePeer(onOpen: (socket: Socket) => void): Promise<NodeAddress> {
  const server = createServer((socket) => {
    bed.adopt(socket);
    socket.on('error', () => undefined);
    const decoder = new FrameDecoder({ maxFrameBytes: 1024 });
    let open = false;
    socket.on('data', (chunk: Buffer) => {
      if (open) return;
      for (const frame of decoder.push(chunk).frames) {
        const handshake = readHandshake(frame);
        if (handshake?.t === 'Hello') {
          socket.write(
            encodeFrame('handshake', encodeValue({ t: 'Challenge', nonce: randomBytes(16), incarnation: 'raw' })),
          );
        } else if (handshake?.t === 'Proof') {
          socket.write(encodeFrame('handshake', encodeValue({ t: 'Accepted' })));
          open = true;
          onOpen(socket);
          return;
        }
      }
    });
  });
  bed.adoptServer(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const bound = server.address();
  if (bound === null || typeof bound === 'string') throw new Error('raw peer has no port');
  return new NodeAddress('test', '127.0.0.1', bound.port);
}

describe('TcpTransport', () => {
  it('bounds the queue while a peer is unreachable, dropping the overflow', async () => {
    const a = await bed.start({ maxQueuedMessages: 3 });
    const gone = await bed.start();
    const address = gone.self;
    await gone.close();
    for (let i = 0; i < 10; i++) a.send(address, heartbeat(i));
    expect(a.stats().droppedQueueFull).toBe(7);
  });

  it('drops messages for a peer that stops reading instead of buffering them without limit', async () => {
    const log = captureLogger('info');
    const maxBufferedBytes = 256 * 1024;
    const a = await bed.start({ maxBufferedBytes, logger: log.logger });
    const stalled: Socket[] = [];
    const peer = await handshakePeer((socket) => {
      socket.pause();
      stalled.push(socket);
    });
    // The connection's own socket, to watch what Node buffers for it.
    const outbound: Socket[] = [];
    const track = a.track.bind(a);
    a.track = (socket: Socket): void => {
      outbound.push(socket);
      track(socket);
    };
    a.send(peer, heartbeat(0));
    await waitFor(() => a.stats().connections === 1 && stalled.length === 1, 'connection open');
    const socket = outbound[0];
    if (!socket) throw new Error('outbound socket not tracked');

    const update = new Uint8Array(64 * 1024);
    let sends = 1;
    let maxBuffered = 0;
    // Keeps sending until the OS buffers are full and the transport drops; the cap ends the test without the bound.
    const sendUntilDropped = async (what: string): Promise<void> => {
      const before = a.stats().droppedBackpressure;
      const cap = sends + 1_000;
      await waitFor(() => {
        for (let i = 0; i < 16; i++, sends++) {
          a.send(peer, { type: 'PlacementUpdate', update });
          maxBuffered = Math.max(maxBuffered, socket.writableLength);
        }
        return a.stats().droppedBackpressure > before || sends >= cap;
      }, what);
      expect(a.stats().droppedBackpressure).toBeGreaterThan(before);
    };
    const warnings = (): number =>
      log.records.filter((r) => r.msg === 'peer is not keeping up, dropping messages').length;

    await sendUntilDropped('first drops');
    for (let i = 0; i < 32; i++, sends++) a.send(peer, { type: 'PlacementUpdate', update });
    expect(maxBuffered).toBeLessThanOrEqual(maxBufferedBytes);
    expect(socket.writableLength).toBeLessThanOrEqual(maxBufferedBytes);
    expect(warnings()).toBe(1);
    expect(a.stats().sent + a.stats().droppedBackpressure).toBe(sends);

    // Once the peer reads again the buffer drains, which ends the episode: the next one warns again.
    stalled[0]?.resume();
    await waitFor(() => log.records.some((r) => r.msg === 'peer is keeping up again'), 'buffer drained');
    stalled[0]?.pause();
    await sendUntilDropped('second drops');
    expect(maxBuffered).toBeLessThanOrEqual(maxBufferedBytes);
    expect(warnings()).toBe(2);
    expect(a.stats()).toMatchObject({ connections: 1, connectionsLost: 0 });
  });

  it.each([
    [
      'grows the backoff for a peer that drops every connection right after the handshake',
      undefined,
      [10, 20, 40, 80, 80],
    ],
    ['resets the backoff after a connection that stayed open for resetAfterMs', 0, [10, 10, 10, 10, 10]],
  ])('%s', async (_name, resetAfterMs, expected) => {
    const log = captureLogger('debug');
    const backoff = { initialDelayMs: 10, maxDelayMs: 80, ...(resetAfterMs === undefined ? {} : { resetAfterMs }) };
    const a = await bed.start({ backoff, logger: log.logger });
    const peer = await handshakePeer((socket) => socket.end());
    const delays = (): unknown[] => log.records.filter((r) => r['retryInMs'] !== undefined).map((r) => r['retryInMs']);
    // The queue is flushed into every short-lived connection, so keep giving the peer a reason to redial.
    let sequence = 0;
    await waitFor(() => {
      a.send(peer, heartbeat(sequence++));
      // The connection cap ends the wait when no delays are reported at all.
      return delays().length >= expected.length || a.stats().connections >= 4 * expected.length;
    }, 'repeated short-lived connections');
    expect(delays().slice(0, expected.length)).toEqual(expected);
    expect(a.stats().connections).toBeGreaterThanOrEqual(expected.length);
    expect(a.stats().connectFailures).toBe(0);
  });

  it('reconnects with backoff after the peer restarts on the same port, delivering queued messages', async () => {
    const a = await bed.start();
    let b = await bed.start({ incarnation: 'b-1' });
    const port = b.self.port;
    let atB = receivedHeartbeats(b);
    a.send(b.self, heartbeat(1));
    await waitFor(() => atB.length === 1, 'first delivery');
    const address = b.self;
    await bed.stop(b);

    // Writes racing the close would be lost (at-most-once); wait until the loss is noticed.
    await waitFor(() => a.stats().connectionsLost === 1, 'connection loss noticed');
    // Sent while the peer is down: queued, retried with backoff.
    a.send(address, heartbeat(2));
    a.send(address, heartbeat(3));
    await waitFor(() => a.stats().connectFailures >= 2, 'repeated connection attempts');
    expect(a.stats().sent).toBe(1);

    b = await bed.start({ port, incarnation: 'b-2' });
    atB = receivedHeartbeats(b);
    await waitFor(() => atB.length === 2, 'queued messages after restart');
    expect(atB.map((m) => m.sequence)).toEqual([2, 3]);
    expect(a.stats().connections).toBe(2);

    // The restarted node dials back: the old node sees its new incarnation.
    b.send(a.self, heartbeat(4));
    const atA = receivedHeartbeats(a);
    await waitFor(() => atA.length === 1, 'reverse direction');
    expect(a.peerIncarnation(b.self)).toBe('b-2');
  });

  it('rejects bad options before binding anything', async () => {
    await expect(TcpTransport.start({ system: 'test', port: 70_000 })).rejects.toThrow(/port must be/);
    await expect(TcpTransport.start({ system: 'test', host: '0.0.0.0' })).rejects.toThrow(/advertisedHost/);
    await expect(TcpTransport.start({ system: 'test', secret: '' })).rejects.toThrow(/secret/);
    await expect(TcpTransport.start({ system: 'test', maxBufferedBytes: 0 })).rejects.toThrow(/maxBufferedBytes/);
    await expect(TcpTransport.start({ system: 'test', backoff: { resetAfterMs: -1 } })).rejects.toThrow(/resetAfterMs/);
    await expect(TcpTransport.start({ system: 'test', maxHandshakeFrameBytes: 10 })).rejects.toThrow(
      /maxHandshakeFrameBytes/,
    );
    await expect(TcpTransport.start({ system: 'test', frameTimeoutMs: 0 })).rejects.toThrow(/frameTimeoutMs/);
    await expect(TcpTransport.start({ system: 'test', maxInboundBufferedBytes: -1 })).rejects.toThrow(
      /maxInboundBufferedBytes/,
    );
    await expect(TcpTransport.start({ system: 'test', decodeLimits: { maxDepth: 0 } })).rejects.toThrow(
      /decodeLimits.maxDepth/,
    );
    const a = await bed.start();
    await expect(TcpTransport.start({ system: 'test', port: a.self.port })).rejects.toThrow(/cannot listen/);
  });
});
