// One client cannot take the management server's whole connection cap (issue 27 case 6), on a real node with
// the default limits: a client at 127.0.0.2 holding 128 slow requests, and reopening each one the server
// closes, may fill the cap while nobody else wants in, but fresh requests from another address are all
// answered: each takes the slot of one of its connections beyond its share (32).
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shareConnections } from '../../src/management/connection-share.js';
import { DEFAULT_HTTP_CONFIG, resolveHttpLimits } from '../../src/management/limits.js';
import type { RunningNode } from '../../src/node/node.js';
import { API, pollUntil, startTestNode, stopAll } from './node-fixture.js';

/** Keeps `count` half-sent requests open from `localAddress`, reopening each one that gets closed. */
class SlowClient {
  private stopped = false;
  private readonly sockets = new Set<Socket>();
  /** Connections the server closed (each one is reopened). */
  closed = 0;

  constructor(
    private readonly port: number,
    private readonly localAddress: string,
    count: number,
  ) {
    for (let i = 0; i < count; i++) this.dial();
  }

  private dial(): void {
    if (this.stopped) return;
    const socket = connect({ host: '127.0.0.1', port: this.port, localAddress: this.localAddress });
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('connect', () => {
      socket.write(`GET ${API}/health HTTP/1.1\r\nHost: x\r\n`);
    });
    // Data means nothing here; what counts is that the server has not closed it.
    socket.on('data', () => undefined);
    socket.once('close', () => {
      this.sockets.delete(socket);
      if (this.stopped) return;
      this.closed++;
      // Paced, so refused reopens do not take the (shared) machine.
      setTimeout(() => this.dial(), 20).unref();
    });
  }

  stop(): void {
    this.stopped = true;
    for (const socket of this.sockets) socket.destroy();
  }
}

function connections(node: RunningNode): Promise<number> {
  return new Promise((resolve, reject) =>
    node.http.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

function get(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, agent: false, headers: { connection: 'close' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.setTimeout(5_000, () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

describe('the management server connection cap, shared per client', () => {
  let node: RunningNode;
  let port: number;
  let slow: SlowClient | undefined;
  beforeAll(async () => {
    node = await startTestNode();
    port = Number(new URL(node.httpUrl).port);
  });
  afterAll(async () => {
    slow?.stop();
    await stopAll([node]);
  });

  it('answers every fresh request while one client holds slow requests on all the slots it can get', async () => {
    expect(DEFAULT_HTTP_CONFIG).toMatchObject({ maxConnections: 128, maxConnectionsPerClient: 32 });
    slow = new SlowClient(port, '127.0.0.2', DEFAULT_HTTP_CONFIG.maxConnections);
    const statuses = [];
    for (let i = 0; i < 30; i++) {
      // Its requests would last the 10 s headers timeout; uncontended, it may hold every slot, and it does.
      await pollUntil(
        async () => (await connections(node)) === DEFAULT_HTTP_CONFIG.maxConnections,
        'the slow client holding every slot',
        5_000,
      );
      statuses.push(await get(port, `${API}/health`));
    }
    expect(statuses).toEqual(Array.from({ length: 30 }, () => 200));
    // It lost (and reopened) one slot per fresh request, and never got beyond the cap.
    expect(slow.closed).toBeGreaterThanOrEqual(30);
    expect(await connections(node)).toBeLessThanOrEqual(DEFAULT_HTTP_CONFIG.maxConnections);
  });

  it('validates the share like every other limit', () => {
    expect(() => resolveHttpLimits({ maxConnectionsPerClient: 0 })).toThrow(/maxConnectionsPerClient/);
    expect(resolveHttpLimits({ maxConnectionsPerClient: 3 }).maxConnectionsPerClient).toBe(3);
  });
});

/** A connection from `localAddress`; `closed` once the server closed it. */
async function dial(port: number, localAddress: string): Promise<{ socket: Socket; closed: () => boolean }> {
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  let closed = false;
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  socket.resume();
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, closed: () => closed };
}

describe('shareConnections', () => {
  let server: Server;
  let port: number;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    server = createServer();
    shareConnections(server, { maxConnections: 4, maxConnectionsPerClient: 2 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('at the cap, lets a client under its share in by closing the oldest of the heaviest client, and refuses the rest', async () => {
    const count = () => new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)));
    const heavy: Array<{ socket: Socket; closed: () => boolean }> = [];
    for (let i = 0; i < 4; i++) heavy.push(await dial(port, '127.0.0.2'));
    sockets.push(...heavy.map((c) => c.socket));
    await pollUntil(async () => (await count()) === 4, 'four connections of one client, uncontended');
    // Over its share at the cap: its own next connection is refused.
    const refused = await dial(port, '127.0.0.2');
    await pollUntil(async () => refused.closed(), 'the heavy client refused');
    // Another client gets in twice, each time at the cost of the heavy client's oldest connection.
    const first = await dial(port, '127.0.0.3');
    await pollUntil(async () => heavy[0]?.closed() === true, 'the oldest heavy connection closed');
    const second = await dial(port, '127.0.0.3');
    await pollUntil(async () => heavy[1]?.closed() === true, 'the next oldest closed');
    sockets.push(first.socket, second.socket);
    // Now both hold their share: a third client finds nobody beyond it and is refused.
    const third = await dial(port, '127.0.0.4');
    await pollUntil(async () => third.closed(), 'a third client refused');
    expect([first.closed(), second.closed(), heavy[2]?.closed(), heavy[3]?.closed()]).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});
