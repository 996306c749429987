// TcpTransport over real loopback sockets: delivery, the secret handshake, hostile bytes, reconnects,
// backpressure from a peer that stops reading, backoff against a peer that drops every connection.
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { FRAME_HEADER_BYTES, FrameDecoder, encodeFrame } from '../../src/cluster/frame-codec.js';
import { readHandshake } from '../../src/cluster/handshake.js';
import { TcpTransport, type TcpTransportOptions } from '../../src/cluster/tcp-transport.js';
import { encodeValue, messageCodecStats } from '../../src/cluster/message-codec.js';
import { captureLogger } from '../../src/logging.js';
import { CLUSTER_MESSAGES } from '../../src/cluster/messages.js';
import { isFamilyMessage, type WireMessage } from '../../src/cluster/wire-message.js';
import { MESSAGE_FAMILIES, PROTOCOL_VERSION, type ProtocolMessage } from '../../src/protocol.js';
import { authenticatedSocket } from './raw-peer.js';
import { waitFor } from './wait-for.js';

const started: TcpTransport[] = [];
const rawSockets: Socket[] = [];
const rawServers: Server[] = [];

async function start(options: Partial<TcpTransportOptions> = {}): Promise<TcpTransport> {
  const transport = await TcpTransport.start({
    system: 'test',
    backoff: { initialDelayMs: 10, maxDelayMs: 100 },
    ...options,
  });
  // The layers a node runs register these; the transport itself speaks no family.
  for (const family of MESSAGE_FAMILIES) transport.register(family);
  started.push(transport);
  return transport;
}

function received(transport: TcpTransport): Array<{ from: string; sequence: number }> {
  const out: Array<{ from: string; sequence: number }> = [];
  transport.onMessage((from, message) => {
    if (isFamilyMessage(CLUSTER_MESSAGES, message) && message.type === 'Heartbeat')
      out.push({ from: from.toString(), sequence: message.sequence });
  });
  return out;
}

function heartbeat(sequence: number): ProtocolMessage {
  return { type: 'Heartbeat', sequence, incarnation: 'test' };
}

/** A raw client socket that records whether the server closed it. */
async function rawClient(port: number): Promise<{ socket: Socket; closed: () => boolean; data: Buffer[] }> {
  const socket = connect({ host: '127.0.0.1', port });
  rawSockets.push(socket);
  let closed = false;
  const data: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => data.push(chunk));
  socket.on('error', () => undefined);
  socket.on('close', () => {
    closed = true;
  });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, closed: () => closed, data };
}

/**
 * A raw peer that completes the accepting side of the handshake (no secret) as a TcpTransport would, then hands
 * the open socket to `onOpen` to misbehave with; it never reads messages.
 */
async function handshakePeer(onOpen: (socket: Socket) => void): Promise<NodeAddress> {
  const server = createServer((socket) => {
    rawSockets.push(socket);
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
  rawServers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const bound = server.address();
  if (bound === null || typeof bound === 'string') throw new Error('raw peer has no port');
  return new NodeAddress('test', '127.0.0.1', bound.port);
}

afterEach(async () => {
  for (const socket of rawSockets.splice(0)) socket.destroy();
  await Promise.all(rawServers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  await Promise.all(started.splice(0).map((t) => t.close()));
});

describe('TcpTransport', () => {
  it('listens on an ephemeral port and delivers in both directions with the sender address', async () => {
    const a = await start();
    const b = await start();
    expect(a.self.port).toBeGreaterThan(0);
    expect(a.self.toString()).toMatch(/^test@127\.0\.0\.1:\d+$/);
    const atA = received(a);
    const atB = received(b);
    for (let i = 0; i < 50; i++) a.send(b.self, heartbeat(i));
    b.send(a.self, heartbeat(99));
    await waitFor(() => atB.length === 50 && atA.length === 1, 'both directions');
    expect(atB.map((m) => m.sequence)).toEqual([...Array(50).keys()]);
    expect(atB[0]?.from).toBe(a.self.toString());
    expect(atA).toEqual([{ from: b.self.toString(), sequence: 99 }]);
    expect(a.stats()).toMatchObject({ sent: 50, connections: 1, handshakeFailures: 0 });
  });

  it('carries binary payloads intact and loops messages to itself through the codec', async () => {
    const a = await start();
    const b = await start();
    const got: WireMessage[] = [];
    b.onMessage((_from, message) => got.push(message));
    a.send(b.self, { type: 'PlacementUpdate', update: new Uint8Array([1, 2, 3, 255]) });
    const self: WireMessage[] = [];
    a.onMessage((_from, message) => self.push(message));
    a.send(a.self, heartbeat(5));
    await waitFor(() => got.length === 1 && self.length === 1, 'delivery');
    const update = got[0] as ProtocolMessage | undefined;
    expect(update?.type).toBe('PlacementUpdate');
    if (update?.type === 'PlacementUpdate') expect([...update.update]).toEqual([1, 2, 3, 255]);
    expect(self).toEqual([heartbeat(5)]);
  });

  it('encodes a message object once for every send of it, and still hands a self-send its own decoded copy', async () => {
    const a = await start();
    const b = await start();
    const atB = received(b);
    const self: WireMessage[] = [];
    a.onMessage((_from, message) => self.push(message));
    const message = heartbeat(21);
    const before = messageCodecStats();
    for (let i = 0; i < 3; i++) a.send(b.self, message);
    a.send(a.self, message);
    a.send(a.self, message);
    expect(messageCodecStats().encodes - before.encodes).toBe(1);
    await waitFor(() => atB.length === 3 && self.length === 2, 'delivery');
    expect(atB.map((m) => m.sequence)).toEqual([21, 21, 21]);
    expect(self).toEqual([message, message]);
    expect(self[0]).not.toBe(message);
    expect(self[0]).not.toBe(self[1]);
  });

  it('connects peers sharing the secret and records the peer incarnation', async () => {
    const a = await start({ secret: 's3cret', incarnation: 'a-1' });
    const b = await start({ secret: 's3cret' });
    const atB = received(b);
    a.send(b.self, heartbeat(1));
    await waitFor(() => atB.length === 1, 'secured delivery');
    expect(b.peerIncarnation(a.self)).toBe('a-1');
  });

  it.each([
    ['a wrong secret', 'wrong', 'peer proved a different cluster secret'],
    ['no secret', undefined, 'peer did not prove the cluster secret'],
  ])('refuses a peer with %s and logs it', async (_name, secret, reason) => {
    const log = captureLogger('warn');
    const b = await start({ secret: 'right', logger: log.logger });
    const intruder = await start(secret === undefined ? {} : { secret });
    const atB = received(b);
    intruder.send(b.self, heartbeat(1));
    await waitFor(() => intruder.stats().handshakeFailures >= 1 && b.stats().handshakeFailures >= 1, 'refusal');
    expect(log.records.some((r) => r.msg === 'refused inbound connection' && r['reason'] === reason)).toBe(true);
    expect(atB).toEqual([]);
    expect(intruder.stats().sent).toBe(0);
  });

  it('does not talk to a peer that cannot prove the secret it expects', async () => {
    const log = captureLogger('warn');
    const open = await start();
    const secured = await start({ secret: 'mine', logger: log.logger });
    const atOpen = received(open);
    secured.send(open.self, heartbeat(1));
    await waitFor(() => secured.stats().handshakeFailures >= 1, 'client-side refusal');
    expect(log.records.some((r) => r['reason'] === 'peer did not prove the cluster secret')).toBe(true);
    expect(atOpen).toEqual([]);
  });

  it('closes a connection that announces an oversized frame and keeps serving others', async () => {
    const log = captureLogger('warn');
    const b = await start({ maxFrameBytes: 1024, logger: log.logger });
    const raw = await rawClient(b.self.port);
    const header = Buffer.alloc(FRAME_HEADER_BYTES);
    header.writeUInt32BE(1024 * 1024, 0);
    header.writeUInt8(PROTOCOL_VERSION, 4);
    header.writeUInt8(1, 5);
    raw.socket.write(header);
    await waitFor(() => raw.closed(), 'server closing the connection');
    expect(b.stats().frameErrors).toBe(1);
    expect(log.records.some((r) => r['code'] === 'frame_too_large')).toBe(true);

    const a = await start();
    const atB = received(b);
    a.send(b.self, heartbeat(1));
    await waitFor(() => atB.length === 1, 'delivery after the bad peer');
  });

  it('closes a connection that sends garbage bytes, counting it', async () => {
    const b = await start();
    const garbage = await rawClient(b.self.port);
    garbage.socket.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    const badHandshake = await rawClient(b.self.port);
    badHandshake.socket.write(encodeFrame('handshake', Buffer.from([0xc1, 0xc1, 0xc1])));
    const messageFirst = await rawClient(b.self.port);
    messageFirst.socket.write(encodeFrame('message', encodeValue(heartbeat(1))));
    await waitFor(() => garbage.closed() && badHandshake.closed() && messageFirst.closed(), 'all three closed');
    expect(b.stats().frameErrors).toBe(1);
    expect(b.stats().handshakeFailures).toBe(2);
    expect(b.stats().delivered).toBe(0);
  });

  it('refuses a dialler that expects another address', async () => {
    const b = await start();
    const raw = await rawClient(b.self.port);
    raw.socket.write(
      encodeFrame(
        'handshake',
        encodeValue({
          t: 'Hello',
          from: 'test@127.0.0.1:1',
          to: 'test@127.0.0.1:2',
          incarnation: 'x',
          nonce: new Uint8Array(16),
        }),
      ),
    );
    await waitFor(() => raw.closed(), 'refusal');
    expect(Buffer.concat(raw.data).toString('latin1')).toContain('Refused');
    expect(b.stats().handshakeFailures).toBe(1);
  });

  it('drops, counts and logs (once per peer and interval) malformed messages but keeps the connection', async () => {
    const log = captureLogger('warn');
    const a = await start();
    const b = await start({ logger: log.logger });
    const atB = received(b);
    a.send(b.self, { type: 'Heartbeat', sequence: 'not a number' } as unknown as ProtocolMessage);
    a.send(b.self, { type: 'NoSuchType' } as unknown as ProtocolMessage);
    a.send(b.self, heartbeat(2));
    await waitFor(() => atB.length === 1, 'valid message after malformed ones');
    expect(b.stats().malformed).toBe(2);
    const lines = log.records.filter((r) => r.msg === 'dropping malformed message');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ host: a.self.toString(), bytes: expect.any(Number) });
    expect(a.stats().connections).toBe(1);
  });

  it('catches a throwing listener and still runs the others', async () => {
    const a = await start();
    const b = await start();
    b.onMessage(() => {
      throw new Error('boom');
    });
    const atB = received(b);
    a.send(b.self, heartbeat(1));
    await waitFor(() => atB.length === 1, 'second listener');
    expect(b.stats().listenerErrors).toBe(1);
  });

  it('bounds the queue while a peer is unreachable, dropping the overflow', async () => {
    const a = await start({ maxQueuedMessages: 3 });
    const gone = await start();
    const address = gone.self;
    await gone.close();
    for (let i = 0; i < 10; i++) a.send(address, heartbeat(i));
    expect(a.stats().droppedQueueFull).toBe(7);
  });

  it('drops messages for a peer that stops reading instead of buffering them without limit', async () => {
    const log = captureLogger('info');
    const maxBufferedBytes = 256 * 1024;
    const a = await start({ maxBufferedBytes, logger: log.logger });
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
    const a = await start({ backoff, logger: log.logger });
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
    const a = await start();
    let b = await start({ incarnation: 'b-1' });
    const port = b.self.port;
    let atB = received(b);
    a.send(b.self, heartbeat(1));
    await waitFor(() => atB.length === 1, 'first delivery');
    const address = b.self;
    await b.close();
    started.splice(started.indexOf(b), 1);

    // Writes racing the close would be lost (at-most-once); wait until the loss is noticed.
    await waitFor(() => a.stats().connectionsLost === 1, 'connection loss noticed');
    // Sent while the peer is down: queued, retried with backoff.
    a.send(address, heartbeat(2));
    a.send(address, heartbeat(3));
    await waitFor(() => a.stats().connectFailures >= 2, 'repeated connection attempts');
    expect(a.stats().sent).toBe(1);

    b = await start({ port, incarnation: 'b-2' });
    atB = received(b);
    await waitFor(() => atB.length === 2, 'queued messages after restart');
    expect(atB.map((m) => m.sequence)).toEqual([2, 3]);
    expect(a.stats().connections).toBe(2);

    // The restarted node dials back: the old node sees its new incarnation.
    b.send(a.self, heartbeat(4));
    const atA = received(a);
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
    const a = await start();
    await expect(TcpTransport.start({ system: 'test', port: a.self.port })).rejects.toThrow(/cannot listen/);
  });
});

/** A frame header announcing `bytes` of payload of the given kind (1 handshake, 2 message), without the payload. */
function frameHeader(bytes: number, kind: 1 | 2): Buffer {
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header.writeUInt32BE(bytes + 2, 0);
  header.writeUInt8(PROTOCOL_VERSION, 4);
  header.writeUInt8(kind, 5);
  return header;
}

let rawPeerPort = 40_000;
async function authenticated(
  target: TcpTransport,
  secret?: string,
): Promise<{ socket: Socket; closed: () => boolean }> {
  const socket = await authenticatedSocket({
    port: target.self.port,
    to: target.self.toString(),
    from: `raw@127.0.0.1:${rawPeerPort++}`,
    ...(secret === undefined ? {} : { secret }),
  });
  rawSockets.push(socket);
  let closed = false;
  socket.on('close', () => {
    closed = true;
  });
  return { socket, closed: () => closed };
}

describe('TcpTransport against hostile peers', () => {
  it('refuses a large frame before the handshake at its header, long before the handshake deadline', async () => {
    const b = await start({ handshakeTimeoutMs: 600_000, maxHandshakeFrameBytes: 1024 });
    const raw = await rawClient(b.self.port);
    // Far below maxFrameBytes (16 MiB): an unauthenticated peer used to get all of it buffered and decoded.
    raw.socket.write(Buffer.concat([frameHeader(64 * 1024, 1), Buffer.alloc(1000)]));
    await waitFor(() => raw.closed(), 'pre-handshake frame refused');
    expect(b.stats()).toMatchObject({ frameErrors: 1, handshakeFailures: 0 });
  });

  it('accepts full-size frames once the peer is authenticated', async () => {
    const a = await start({ secret: 's', maxHandshakeFrameBytes: 256 });
    const b = await start({ secret: 's', maxHandshakeFrameBytes: 256 });
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
    const b = await start({ secret: 'k', frameTimeoutMs: 50 });
    const peer = await authenticated(b, 'k');
    peer.socket.write(Buffer.concat([frameHeader(1024 * 1024, 2), Buffer.alloc(10)]));
    await waitFor(() => peer.closed(), 'stalled frame timed out', 10_000);
    expect(b.stats()).toMatchObject({ frameTimeouts: 1, frameErrors: 0 });
  });

  it('lets a peer finish frame after frame, each on its own clock', async () => {
    const b = await start({ frameTimeoutMs: 5_000 });
    const atB = received(b);
    const peer = await authenticated(b);
    const frame = encodeFrame('message', encodeValue(heartbeat(1)));
    // Half a frame, then the rest together with the next frame: both complete, nothing times out.
    peer.socket.write(frame.subarray(0, 5));
    peer.socket.write(Buffer.concat([frame.subarray(5), encodeFrame('message', encodeValue(heartbeat(2)))]));
    await waitFor(() => atB.length === 2, 'both frames delivered');
    expect(b.stats()).toMatchObject({ frameTimeouts: 0, inboundOverBudget: 0 });
    expect(peer.closed()).toBe(false);
  });

  it('bounds what one connection and all connections together may hold in incomplete frames', async () => {
    const b = await start({
      maxInboundBytesPerConnection: 48 * 1024,
      maxInboundBufferedBytes: 64 * 1024,
      frameTimeoutMs: 600_000,
    });
    const big = await authenticated(b);
    big.socket.write(Buffer.concat([frameHeader(1024 * 1024, 2), Buffer.alloc(50 * 1024)]));
    await waitFor(() => big.closed(), 'over the per-connection budget');
    expect(b.stats().inboundOverBudget).toBe(1);

    const first = await authenticated(b);
    first.socket.write(Buffer.concat([frameHeader(1024 * 1024, 2), Buffer.alloc(40 * 1024)]));
    await waitFor(() => b.stats().frameTimeouts === 0 && !first.closed(), 'first partial frame held');
    const second = await authenticated(b);
    second.socket.write(Buffer.concat([frameHeader(1024 * 1024, 2), Buffer.alloc(40 * 1024)]));
    await waitFor(() => second.closed(), 'over the total budget');
    expect(b.stats().inboundOverBudget).toBe(2);
    expect(first.closed()).toBe(false);

    // Closing the first connection returns its bytes to the budget: a third peer may hold as much again.
    first.socket.destroy();
    await waitFor(() => first.closed(), 'first closed');
    const atB = received(b);
    const third = await authenticated(b);
    const frame = encodeFrame('message', encodeValue({ type: 'PlacementUpdate', update: new Uint8Array(40 * 1024) }));
    third.socket.write(frame.subarray(0, 41 * 1024));
    third.socket.write(frame.subarray(41 * 1024));
    third.socket.write(encodeFrame('message', encodeValue(heartbeat(3))));
    await waitFor(() => atB.length === 1, 'third peer served');
    expect(b.stats().inboundOverBudget).toBe(2);
  });

  it('writes one log line per kind and peer host per interval however many refusals a peer causes', async () => {
    const log = captureLogger('warn');
    const b = await start({ logger: log.logger });
    const clients = await Promise.all(Array.from({ length: 30 }, () => rawClient(b.self.port)));
    for (const client of clients) client.socket.write(Buffer.from('GET / HTTP/1.1\r\n\r\n'));
    await waitFor(() => clients.every((c) => c.closed()), 'all refused');
    expect(b.stats().frameErrors).toBe(30);
    const lines = log.records.filter((r) => r.msg === 'closing inbound connection after a bad frame');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ host: expect.stringMatching(/127\.0\.0\.1$/), code: 'frame_too_large' });
  });

  it('drops a structured-clone reference bomb from an authenticated peer without decoding it', async () => {
    const log = captureLogger('warn');
    const b = await start({ secret: 'k', logger: log.logger });
    const atB = received(b);
    const peer = await authenticated(b, 'k');
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
