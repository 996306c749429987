// The management client reads at most maxResponseBytes of an answer: a real local HTTP server sending far
// more (declared or endless) makes it abort the transfer and fail with response_too_large, whether the
// client is used directly or through a CLI command; answers under the cap are read whole.
import { createServer, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, ManagementClient } from '../../src/cli/client.js';
import { main } from '../../src/cli/main.js';

interface Sent {
  /** Resolves when the client's connection closed, with the bytes the server had written by then. */
  readonly closed: Promise<number>;
}

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Serves every request with `total` bytes of JSON-ish filler, in 64 KiB chunks that respect backpressure. */
async function serveFlood(total: number, declareLength: boolean): Promise<{ url: string; sent: Sent[] }> {
  const sent: Sent[] = [];
  server = createServer((_req, res) => {
    sent.push({ closed: flood(res, total, declareLength) });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  return { url: `http://127.0.0.1:${address.port}`, sent };
}

function flood(res: ServerResponse, total: number, declareLength: boolean): Promise<number> {
  return new Promise((resolve) => {
    let written = 0;
    let closed = false;
    res.on('close', () => {
      closed = true;
      resolve(written);
    });
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(declareLength ? { 'content-length': String(total) } : {}),
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = (): void => {
      while (!closed && written < total) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!closed) res.end();
    };
    pump();
  });
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('response size cap of the management client', () => {
  const cap = 256 * 1024;
  const total = 64 * 1024 * 1024;

  it('aborts an answer whose declared length is over the cap, before reading it', async () => {
    const { url, sent } = await serveFlood(total, true);
    const error = await rejection(new ManagementClient(url, { maxResponseBytes: cap }).members());
    expect(error.code).toBe('response_too_large');
    expect(error.message).toContain(String(cap));
    expect(await sent[0]!.closed).toBeLessThan(total);
  });

  it('aborts an undeclared (chunked) answer once it passes the cap', async () => {
    const { url, sent } = await serveFlood(total, false);
    const error = await rejection(new ManagementClient(url, { maxResponseBytes: cap }).health());
    expect(error.code).toBe('response_too_large');
    expect(await sent[0]!.closed).toBeLessThan(total);
  });

  it('reads an answer under the cap whole', async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ self: 'app@127.0.0.1:1', members: [], pad: 'x'.repeat(100_000) }));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const address = server.address() as { port: number };
    const answer = await new ManagementClient(`http://127.0.0.1:${address.port}`, { maxResponseBytes: cap }).members();
    expect(answer.self).toBe('app@127.0.0.1:1');
  });

  it('a CLI command against a server that answers without end fails with exit code 1 and says why (default cap)', async () => {
    const { url, sent } = await serveFlood(total, false);
    const err: string[] = [];
    const code = await main(['node', 'actor-ts-placement', 'members', '--url', url], {
      out: () => undefined,
      err: (line) => err.push(line),
    });
    expect(code).toBe(1);
    expect(err.join('\n')).toMatch(/response_too_large/);
    expect(await sent[0]!.closed).toBeLessThan(total);
  });
});
