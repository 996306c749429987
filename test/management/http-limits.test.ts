// The management server against real sockets: a half-sent request is answered 408 in the error shape and
// closed once the (injected, small) headers or request timeout passes; connections past the cap are closed
// on accept while requests under it are served; errors Node's parser answers itself keep the error shape.
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/node/node.js';
import { resolveHttpLimits } from '../../src/management/limits.js';
import { ActorTsError } from '../../src/errors.js';
import { API, COUNTER, pollUntil, startTestNode, stopAll } from './node-fixture.js';

interface RawAnswer {
  /** Everything the server sent before it closed the connection. */
  readonly text: string;
  readonly status: number | undefined;
  readonly body: unknown;
}

function portOf(node: RunningNode): number {
  return Number(new URL(node.httpUrl).port);
}

/** Opens a connection and resolves once it is established. */
function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Resolves with what the server sent when it closes the connection (the server must close it, not the test). */
function closedByServer(socket: Socket): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined); // a reset is a close too
    socket.once('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1];
      const bodyText = text.includes('\r\n\r\n') ? text.slice(text.indexOf('\r\n\r\n') + 4) : '';
      let body: unknown;
      try {
        body = bodyText === '' ? undefined : JSON.parse(bodyText);
      } catch {
        body = bodyText;
      }
      resolve({ text, status: status === undefined ? undefined : Number(status), body });
    });
  });
}

/** Sends `bytes` (nothing when not given) on a connection of its own; resolves once the server closed it. */
async function rawExchange(port: number, bytes?: string): Promise<RawAnswer> {
  const socket = await open(port);
  const answer = closedByServer(socket);
  if (bytes !== undefined) socket.write(bytes);
  return answer;
}

/** One request on its own connection (no keep-alive pool holding a slot afterwards). */
function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, agent: false, headers: { connection: 'close', ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function connections(node: RunningNode): Promise<number> {
  return new Promise((resolve, reject) =>
    node.http.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

function expectShape(body: unknown, code: string): void {
  expect(body).toEqual({ error: code, message: expect.any(String) });
  expect((body as { message: string }).message.length).toBeGreaterThan(0);
}

/** A `status` answer whose body is the error shape with `code`. */
function expectErrorAnswer(
  answer: { readonly status: number | undefined; readonly body: unknown },
  status: number,
  code: string,
): void {
  expect(answer.status).toBe(status);
  expectShape(answer.body, code);
}

describe('management server timeouts (small injected timeouts)', () => {
  let node: RunningNode;
  let port: number;
  beforeAll(async () => {
    node = await startTestNode({ http: { headersTimeoutMs: 150, requestTimeoutMs: 300, keepAliveTimeoutMs: 150 } });
    port = portOf(node);
  });
  afterAll(() => stopAll([node]));

  it('answers 408 in the error shape and closes a request whose headers never finish', async () => {
    const answer = await rawExchange(
      port,
      `POST ${COUNTER}/placements HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n`,
    );
    expectErrorAnswer(answer, 408, 'request_timeout');
  });

  it('answers 408 and closes a request whose body never finishes, and writes nothing', async () => {
    const body = JSON.stringify({ shardId: 7, target: node.address.toString() });
    const answer = await rawExchange(
      port,
      `POST ${COUNTER}/placements HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    expectErrorAnswer(answer, 408, 'request_timeout');
    const placements = await get(port, `${COUNTER}/placements`);
    expect(placements).toEqual({ status: 200, body: { placements: [] } });
  });

  it('closes a connection that never sends a byte', async () => {
    const { text } = await rawExchange(port);
    // Nothing was asked, so an answer is optional; the point is that the server let go of the socket.
    if (text !== '') expect(text).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes an idle keep-alive connection after a served request', async () => {
    const { status } = await rawExchange(port, `GET ${API}/health HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(status).toBe(200);
  });
});

describe('management server connection cap', () => {
  let node: RunningNode;
  let port: number;
  const held: Socket[] = [];
  beforeAll(async () => {
    node = await startTestNode({ http: { maxConnections: 3 } });
    port = portOf(node);
  });
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await stopAll([node]);
  });

  it('serves requests under the cap, closes connections over it at once, and serves again once one is freed', async () => {
    // Two half-sent requests hold two of the three slots; a normal request still gets the third.
    for (let i = 0; i < 2; i++) {
      const socket = await open(port);
      socket.on('error', () => undefined);
      socket.write(`GET ${API}/health HTTP/1.1\r\n`);
      held.push(socket);
    }
    await pollUntil(async () => (await connections(node)) === 2, 'two held connections');
    expect(await get(port, `${API}/health`)).toMatchObject({ status: 200, body: { status: 'ok' } });

    const third = await open(port);
    third.on('error', () => undefined);
    held.push(third);
    await pollUntil(async () => (await connections(node)) === 3, 'three held connections');

    // Over the cap: accepted by the kernel, closed by the server without an answer.
    const refused = await rawExchange(port);
    expect(refused.text).toBe('');
    await expect(get(port, `${API}/health`)).rejects.toThrow();
    expect(await connections(node)).toBe(3);

    held.shift()?.destroy();
    await pollUntil(async () => (await connections(node)) === 2, 'a freed slot');
    expect(await get(port, `${API}/health`)).toMatchObject({ status: 200, body: { status: 'ok' } });
  });
});

describe('errors answered before a route runs keep the error shape (real server)', () => {
  let node: RunningNode;
  let port: number;
  beforeAll(async () => {
    node = await startTestNode();
    port = portOf(node);
  });
  afterAll(() => stopAll([node]));

  it('431 for headers over the size limit', async () => {
    const answer = await rawExchange(
      port,
      `GET ${API}/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expectErrorAnswer(answer, 431, 'headers_too_large');
  });

  it('400 for bytes that are not HTTP', async () => {
    expectErrorAnswer(await rawExchange(port, 'HELLO THERE\r\n\r\n'), 400, 'bad_request');
  });

  it('entity ids up to the schema limit of 256 reach the route; longer ones get 400 or 414 in the error shape', async () => {
    for (const length of [101, 200, 256]) {
      const id = 'e'.repeat(length);
      const answer = await get(port, `/counters/${id}`);
      expect(answer.status, `id of ${length}`).toBe(200);
      expect(answer.body).toMatchObject({ entityId: id, value: 0 });
    }
    // Multi-byte characters are percent-encoded to several times their length; 256 of them still fit.
    const wide = 'é'.repeat(256);
    const wideAnswer = await get(port, `/counters/${encodeURIComponent(wide)}`);
    expect(wideAnswer.status).toBe(200);
    expect(wideAnswer.body).toMatchObject({ entityId: wide });

    expectErrorAnswer(await get(port, `/counters/${'e'.repeat(257)}`), 400, 'invalid_request');
    expectErrorAnswer(await get(port, `/counters/${'e'.repeat(5_000)}`), 414, 'uri_too_long');
  });

  it('404, 413, 415 and malformed JSON through a real connection', async () => {
    const base = node.httpUrl;
    const post = (body: string, contentType = 'application/json') =>
      fetch(`${base}${COUNTER}/placements`, { method: 'POST', headers: { 'content-type': contentType }, body });
    const cases: Array<[Response, number, string]> = [
      [await fetch(`${base}/nowhere`), 404, 'not_found'],
      [
        await post(
          JSON.stringify({
            placements: Array.from({ length: 5_000 }, (_, i) => ({ shardId: i, target: 'x'.repeat(250) })),
          }),
        ),
        413,
        'payload_too_large',
      ],
      [await post('shardId=1', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type'],
      [await post('{"shardId":'), 400, 'malformed_json'],
    ];
    for (const [response, status, code] of cases) {
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const body = await response.json();
      expectShape(body, code);
      // The 413 says what the limit is, so the operator knows how much to split a bulk write.
      if (status === 413)
        expect((body as { message: string }).message).toMatch(/larger than this node's limit of \d+ bytes/);
    }
  });
});

describe('resolveHttpLimits', () => {
  it('rejects non-positive values and a headers timeout longer than the request timeout', () => {
    expect(() => resolveHttpLimits({ maxConnections: 0 })).toThrow(ActorTsError);
    expect(() => resolveHttpLimits({ requestTimeoutMs: 1.5 })).toThrow(/requestTimeoutMs/);
    expect(() => resolveHttpLimits({ headersTimeoutMs: 2_000, requestTimeoutMs: 1_000 })).toThrow(/headersTimeoutMs/);
    expect(resolveHttpLimits({ maxConnections: 7 }).maxConnections).toBe(7);
    // A request timeout under the default headers timeout pulls the headers timeout down with it.
    expect(resolveHttpLimits({ requestTimeoutMs: 500 })).toMatchObject({
      requestTimeoutMs: 500,
      headersTimeoutMs: 500,
    });
  });
});
