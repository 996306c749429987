// A delivery timeout reaches an HTTP caller as 504 `timeout` with `delivered`, so a client can tell "never
// applied" from "outcome unknown"; other errors keep their shape without the field.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { sendError } from '../../src/management/errors.js';
import { DeliveryTimeoutError } from '../../src/sharding/region/pending-asks.js';

describe('delivery timeouts over HTTP', () => {
  it('answers 504 with delivered false or true, and no delivered field for other errors', async () => {
    const app = Fastify();
    app.setErrorHandler((error: ActorTsError, _request, reply) => sendError(reply, error));
    app.get('/never', async () => {
      throw new DeliveryTimeoutError('ask to Counter/a timed out after 5 ms', false);
    });
    app.get('/unknown', async () => {
      throw new DeliveryTimeoutError('ask to Counter/a timed out after 5 ms', true);
    });
    app.get('/other', async () => {
      throw new ActorTsError('timeout', 'plain');
    });
    const never = await app.inject({ url: '/never' });
    expect(never.statusCode).toBe(504);
    expect(never.json()).toMatchObject({
      error: 'timeout',
      delivered: false,
      message: expect.stringContaining('never applied'),
    });
    expect((await app.inject({ url: '/unknown' })).json()).toMatchObject({ error: 'timeout', delivered: true });
    expect((await app.inject({ url: '/other' })).json()).toEqual({ error: 'timeout', message: 'plain' });
    await app.close();
  });
});
