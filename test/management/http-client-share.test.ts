// One client cannot take the management server's whole connection cap (issue 27 case 6), on a real node with
// the default limits: a client at 127.0.0.2 holding 128 slow requests, and reopening each one the server
// closes, keeps only its share (32 of 128), and fresh requests from another address are all answered.
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_HTTP_LIMITS, resolveHttpLimits } from '../../src/management/limits.js';
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
      setTimeout(() => this.dial(), 200).unref();
    });
  }

  stop(): void {
    this.stopped = true;
    for (const socket of this.sockets) socket.destroy();
  }
}

function get(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false, headers: { connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
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
    expect(DEFAULT_HTTP_LIMITS).toMatchObject({ maxConnections: 128, maxConnectionsPerClient: 32 });
    slow = new SlowClient(port, '127.0.0.2', DEFAULT_HTTP_LIMITS.maxConnections);
    // Everything past its share is closed at once (the requests it holds would last the 10 s headers timeout).
    await pollUntil(async () => slow !== undefined && slow.closed >= 128 - DEFAULT_HTTP_LIMITS.maxConnectionsPerClient, 'the slow client refused past its share', 5_000);
    const statuses = [];
    for (let i = 0; i < 30; i++) statuses.push(await get(port, `${API}/health`));
    expect(statuses).toEqual(Array.from({ length: 30 }, () => 200));
  });

  it('validates the share like every other limit', () => {
    expect(() => resolveHttpLimits({ maxConnectionsPerClient: 0 })).toThrow(/maxConnectionsPerClient/);
    expect(resolveHttpLimits({ maxConnectionsPerClient: 3 }).maxConnectionsPerClient).toBe(3);
  });
});
