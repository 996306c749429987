// While the management server closes (the node is stopping), a request still reaching it (pipelined on a
// kept-alive connection while another is in flight) is refused with a typed 503 `shutting_down` before any
// handler runs: never acknowledged, never Fastify's untyped "Service Unavailable". Real Fastify on a real
// socket; the in-flight request is held until the server has started closing.
import { connect } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { refuseWhileClosing } from '../../src/management/server.js';

describe('a management server that is closing', () => {
  it('answers a request that arrives while it closes with 503 shutting_down, and its handler never runs', async () => {
    const app = Fastify({ return503OnClosing: false });
    refuseWhileClosing(app);
    let startedClosing!: () => void;
    const closingStarted = new Promise<void>((resolve) => (startedClosing = resolve));
    // Registered after refuseWhileClosing's, so it runs once the flag is set.
    app.addHook('preClose', (done) => {
      startedClosing();
      done();
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const slowArrived = new Promise<void>((resolve) => (arrived = resolve));
    let writes = 0;
    app.get('/slow', async () => {
      arrived();
      await held;
      return { ok: true };
    });
    app.post('/write', async () => {
      writes++;
      return { accepted: true };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };

    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const body = '{"shardId":1}';
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    await slowArrived;
    const closed = app.close();
    await closingStarted;
    // The connection is busy (the first request is in flight), so closing does not drop it: the write
    // reaches the server after it started closing, as a client's next request on a kept-alive connection.
    let writeParsed!: () => void;
    const parsed = new Promise<void>((resolve) => (writeParsed = resolve));
    app.server.once('request', () => writeParsed());
    socket.write(
      `POST /write HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await parsed;
    release();
    await closed;
    await ended;

    const responses = received.split(/(?=HTTP\/1\.1 )/);
    expect(responses).toHaveLength(2);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 200/);
    expect(responses[1]).toMatch(/^HTTP\/1\.1 503/);
    expect(responses[1]!.toLowerCase()).toContain('connection: close');
    const json = JSON.parse(responses[1]!.slice(responses[1]!.indexOf('\r\n\r\n') + 4)) as {
      error: string;
      message: string;
    };
    expect(json).toEqual({ error: 'shutting_down', message: expect.stringMatching(/shutting down/) });
    expect(writes).toBe(0);
  });
});
