// A connection that stalls (the link was cut, TCP sits in retransmission backoff) is replaced on request:
// `reconnect` drops the stalled outbound connection and dials afresh, and the receiving side drops the
// peer's older inbound connection once the new one arrives. The stall is a loopback proxy between the two
// transports that stops forwarding on the connections it holds, while new connections pass again.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import type { TcpTransportOptions } from '../../src/cluster/transport/tcp-transport.js';
import { waitFor } from './wait-for.js';
import { heartbeat } from './heartbeats.js';
import { TcpTestBed, heartbeatsOf } from './tcp-peers.js';

const bed = new TcpTestBed();
const proxies: StallingProxy[] = [];

afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close();
  await bed.cleanUp();
});

/** Forwards listenHost:port to targetHost:port; `stall()` silently drops everything on the connections it holds. */
class StallingProxy {
  private readonly pairs: Array<{ client: Socket; upstream: Socket; stalled: boolean; upstreamClosed: boolean }> = [];
  private readonly server: Server;

  constructor(targetHost: string, port: number) {
    this.server = createServer((client) => {
      const upstream = connect({ host: targetHost, port });
      const pair = { client, upstream, stalled: false, upstreamClosed: false };
      this.pairs.push(pair);
      client.on('data', (chunk: Buffer) => {
        if (!pair.stalled) upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!pair.stalled) client.write(chunk);
      });
      // A stalled link carries no close either: only an open one passes it on.
      client.on('close', () => {
        if (!pair.stalled) upstream.destroy();
      });
      upstream.on('close', () => {
        pair.upstreamClosed = true;
        if (!pair.stalled) client.destroy();
      });
      client.on('error', () => undefined);
      upstream.on('error', () => undefined);
    });
  }

  listen(host: string, port: number): Promise<void> {
    return new Promise((resolve) => this.server.listen(port, host, () => resolve()));
  }

  stall(): void {
    for (const pair of this.pairs) pair.stalled = true;
  }

  get connections(): number {
    return this.pairs.length;
  }

  /** Connections the receiving transport closed on its side (its end of the proxy's upstream socket). */
  get closedByReceiver(): number {
    return this.pairs.filter((p) => p.upstreamClosed).length;
  }

  close(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * B listens on 127.0.0.2 and answers to 127.0.0.1 on the same port, where the proxy listens: every
 * connection to B's address goes through the proxy.
 */
async function behindProxy(senderOptions: Partial<TcpTransportOptions> = {}) {
  const b = await bed.start({ host: '127.0.0.2', advertisedHost: '127.0.0.1' });
  const proxy = new StallingProxy('127.0.0.2', b.self.port);
  proxies.push(proxy);
  await proxy.listen('127.0.0.1', b.self.port);
  const a = await bed.start(senderOptions);
  return { a, b, proxy, atB: heartbeatsOf(b) };
}

describe('TcpTransport.reconnect', () => {
  it('replaces a stalled connection: what follows the request is delivered on a new one, and the receiver drops the old', async () => {
    const { a, b, proxy, atB } = await behindProxy({ redialMinAgeMs: 0 });
    a.send(b.self, heartbeat(1));
    await waitFor(() => atB.length === 1, 'delivery through the proxy');
    proxy.stall();
    a.send(b.self, heartbeat(2));
    a.reconnect(b.self);
    a.send(b.self, heartbeat(3));
    await waitFor(() => atB.includes(3), 'delivery on the new connection');
    // Heartbeat 2 went into the stalled connection and is lost with it: delivery is at-most-once.
    expect(atB).toEqual([1, 3]);
    expect(a.stats()).toMatchObject({ redials: 1, connections: 2 });
    expect(proxy.connections).toBe(2);
    // The peer dialled again, so its older connection is dead: the receiver closes it.
    await waitFor(() => proxy.closedByReceiver === 1, 'the receiver dropping the stalled inbound connection');
  });

  it('keeps a connection younger than redialMinAgeMs, and ignores a peer it has no connection to', async () => {
    const { a, b, proxy, atB } = await behindProxy({ redialMinAgeMs: 60_000 });
    a.reconnect(b.self);
    a.send(b.self, heartbeat(1));
    await waitFor(() => atB.length === 1, 'delivery');
    a.reconnect(b.self);
    a.send(b.self, heartbeat(2));
    await waitFor(() => atB.length === 2, 'delivery on the same connection');
    a.reconnect(NodeAddress.parse('test@127.0.0.1:1'));
    expect(a.stats()).toMatchObject({ redials: 0, connections: 1 });
    expect(proxy.connections).toBe(1);
  });

  it('rejects a negative redialMinAgeMs', async () => {
    await expect(bed.start({ redialMinAgeMs: -1 })).rejects.toThrow(/redialMinAgeMs/);
  });
});
