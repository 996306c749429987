// TcpTransport over real loopback sockets: delivery both ways and to itself, the secret handshake, and peers that
// send hostile bytes before or during the handshake or malformed messages after it. Flow control and reconnects
// are in tcp-transport-flow.test.ts, authenticated hostile peers in tcp-hostile-peers.test.ts.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { FRAME_HEADER_BYTES, encodeFrame } from '../../src/cluster/transport/frame-codec.js';
import { encodeValue, messageCodecStats } from '../../src/cluster/transport/message-codec.js';
import type { WireMessage } from '../../src/cluster/transport/wire-message.js';
import { captureLogger } from '../../src/logging.js';
import { PROTOCOL_VERSION, type ProtocolMessage } from '../../src/protocol.js';
import { heartbeat, receivedHeartbeats } from './heartbeats.js';
import { TcpTestBed } from './tcp-peers.js';
import { waitFor } from './wait-for.js';

const bed = new TcpTestBed();
afterEach(() => bed.cleanUp());

describe('TcpTransport', () => {
  it('listens on an ephemeral port and delivers in both directions with the sender address', async () => {
    const a = await bed.start();
    const b = await bed.start();
    expect(a.self.port).toBeGreaterThan(0);
    expect(a.self.toString()).toMatch(/^test@127\.0\.0\.1:\d+$/);
    const atA = receivedHeartbeats(a);
    const atB = receivedHeartbeats(b);
    for (let i = 0; i < 50; i++) a.send(b.self, heartbeat(i));
    b.send(a.self, heartbeat(99));
    await waitFor(() => atB.length === 50 && atA.length === 1, 'both directions');
    expect(atB.map((m) => m.sequence)).toEqual([...Array(50).keys()]);
    expect(atB[0]?.from).toBe(a.self.toString());
    expect(atA).toEqual([{ from: b.self.toString(), sequence: 99 }]);
    expect(a.stats()).toMatchObject({ sent: 50, connections: 1, handshakeFailures: 0 });
  });

  it('carries binary payloads intact and loops messages to itself through the codec', async () => {
    const a = await bed.start();
    const b = await bed.start();
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
    const a = await bed.start();
    const b = await bed.start();
    const atB = receivedHeartbeats(b);
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

  it('delivers whole and in order what one tick writes past the cork bound, and what is sent just before close', async () => {
    const a = await bed.start();
    const b = await bed.start();
    const got: Uint8Array[] = [];
    b.onMessage((_from, message) => {
      const m = message as ProtocolMessage;
      if (m.type === 'PlacementUpdate') got.push(m.update);
    });
    // One tick: 24 frames of 10 KiB, past the 64 KiB a socket stays corked for.
    for (let i = 0; i < 24; i++) a.send(b.self, { type: 'PlacementUpdate', update: new Uint8Array(10_240).fill(i) });
    await waitFor(() => got.length === 24, 'the burst');
    expect(got.map((u) => [u.byteLength, u[0], u[10_239]])).toEqual([...Array(24).keys()].map((i) => [10_240, i, i]));
    // Written in the tick the transport closes in: still corked then, and handed to the kernel before the close.
    a.send(b.self, { type: 'PlacementUpdate', update: new Uint8Array([42]) });
    await a.close();
    await waitFor(() => got.length === 25, 'the last frame');
    expect([...(got[24] ?? [])]).toEqual([42]);
  });

  it('flush hands the frames corked this tick to the kernel at once, before the tick ends', async () => {
    const a = await bed.start();
    const b = await bed.start();
    const atB = receivedHeartbeats(b);
    a.send(b.self, heartbeat(1));
    await waitFor(() => atB.length === 1, 'the connection open');
    // All in one tick, as a node that goes on packing a hand-off's state after its report: corked until flushed.
    a.send(b.self, heartbeat(2));
    expect(bytesQueuedAt(b.self.port)).toBe(0);
    a.flush(b.self);
    // The kernel has the bytes in b's receive queue before this tick ends (b reads nothing until it does).
    const deadline = performance.now() + 5_000;
    while (bytesQueuedAt(b.self.port) === 0 && performance.now() < deadline);
    expect(bytesQueuedAt(b.self.port)).toBeGreaterThan(0);
    await waitFor(() => atB.length === 2, 'the flushed frame');
  });

  it('connects peers sharing the secret and records the peer incarnation', async () => {
    const a = await bed.start({ secret: 's3cret', incarnation: 'a-1' });
    const b = await bed.start({ secret: 's3cret' });
    const atB = receivedHeartbeats(b);
    a.send(b.self, heartbeat(1));
    await waitFor(() => atB.length === 1, 'secured delivery');
    expect(b.peerIncarnation(a.self)).toBe('a-1');
  });

  it.each([
    ['a wrong secret', 'wrong', 'peer proved a different cluster secret'],
    ['no secret', undefined, 'peer did not prove the cluster secret'],
  ])('refuses a peer with %s and logs it', async (_name, secret, reason) => {
    const log = captureLogger('warn');
    const b = await bed.start({ secret: 'right', logger: log.logger });
    const intruder = await bed.start(secret === undefined ? {} : { secret });
    const atB = receivedHeartbeats(b);
    intruder.send(b.self, heartbeat(1));
    await waitFor(() => intruder.stats().handshakeFailures >= 1 && b.stats().handshakeFailures >= 1, 'refusal');
    expect(log.records.some((r) => r.msg === 'refused inbound connection' && r['reason'] === reason)).toBe(true);
    expect(atB).toEqual([]);
    expect(intruder.stats().sent).toBe(0);
  });

  it('does not talk to a peer that cannot prove the secret it expects', async () => {
    const log = captureLogger('warn');
    const open = await bed.start();
    const secured = await bed.start({ secret: 'mine', logger: log.logger });
    const atOpen = receivedHeartbeats(open);
    secured.send(open.self, heartbeat(1));
    await waitFor(() => secured.stats().handshakeFailures >= 1, 'client-side refusal');
    expect(log.records.some((r) => r['reason'] === 'peer did not prove the cluster secret')).toBe(true);
    expect(atOpen).toEqual([]);
  });

  it('closes a connection that announces an oversized frame and keeps serving others', async () => {
    const log = captureLogger('warn');
    const b = await bed.start({ maxFrameBytes: 1024, logger: log.logger });
    const raw = await bed.client(b.self.port);
    const header = Buffer.alloc(FRAME_HEADER_BYTES);
    header.writeUInt32BE(1024 * 1024, 0);
    header.writeUInt8(PROTOCOL_VERSION, 4);
    header.writeUInt8(1, 5);
    raw.socket.write(header);
    await waitFor(() => raw.closed(), 'server closing the connection');
    expect(b.stats().frameErrors).toBe(1);
    expect(log.records.some((r) => r['code'] === 'frame_too_large')).toBe(true);

    const a = await bed.start();
    const atB = receivedHeartbeats(b);
    a.send(b.self, heartbeat(1));
    await waitFor(() => atB.length === 1, 'delivery after the bad peer');
  });

  it('closes a connection that sends garbage bytes, counting it', async () => {
    const b = await bed.start();
    const garbage = await bed.client(b.self.port);
    garbage.socket.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    const badHandshake = await bed.client(b.self.port);
    badHandshake.socket.write(encodeFrame('handshake', Buffer.from([0xc1, 0xc1, 0xc1])));
    const messageFirst = await bed.client(b.self.port);
    messageFirst.socket.write(encodeFrame('message', encodeValue(heartbeat(1))));
    await waitFor(() => garbage.closed() && badHandshake.closed() && messageFirst.closed(), 'all three closed');
    expect(b.stats().frameErrors).toBe(1);
    expect(b.stats().handshakeFailures).toBe(2);
    expect(b.stats().delivered).toBe(0);
  });

  it('refuses a dialler that expects another address', async () => {
    const b = await bed.start();
    const raw = await bed.client(b.self.port);
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
    const a = await bed.start();
    const b = await bed.start({ logger: log.logger });
    const atB = receivedHeartbeats(b);
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
    const a = await bed.start();
    const b = await bed.start();
    b.onMessage(() => {
      throw new Error('boom');
    });
    const atB = receivedHeartbeats(b);
    a.send(b.self, heartbeat(1));
    await waitFor(() => atB.length === 1, 'second listener');
    expect(b.stats().listenerErrors).toBe(1);
  });
});

/** Bytes the kernel holds unread for the established TCP connections accepted at `port` (Linux's /proc/net/tcp). */
function bytesQueuedAt(port: number): number {
  const localPort = port.toString(16).toUpperCase().padStart(4, '0');
  let queued = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, , state, queues] = line.trim().split(/\s+/);
    if (local?.endsWith(`:${localPort}`) && state === '01') queued += parseInt(queues?.split(':')[1] ?? '0', 16);
  }
  return queued;
}
