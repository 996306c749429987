// The demo Counter's reliable increment (issue 23): `POST /counters/:id/increment?reliable=true` goes through
// EntityRef.send and answers once the entity processed it; the query is validated like every input.
import { describe, expect, it } from 'vitest';
import { expectError, useTestNode } from './node-fixture.js';

describe('reliable counter increment', () => {
  const node = useTestNode();

  it('answers processed once the increment was applied, and a plain increment still answers the value', async () => {
    const reliable = await node().http.inject({ method: 'POST', url: '/counters/rel/increment?reliable=true' });
    expect(reliable.statusCode, reliable.body).toBe(200);
    expect(reliable.json()).toMatchObject({ entityId: 'rel', processed: true });
    const plain = await node().http.inject({ method: 'POST', url: '/counters/rel/increment' });
    expect(plain.json()).toMatchObject({ entityId: 'rel', value: 2 });
  });

  it('refuses a reliable flag that is not a boolean, and unknown query parameters', async () => {
    expectError(
      await node().http.inject({ method: 'POST', url: '/counters/rel2/increment?reliable=maybe' }),
      400,
      'invalid_request',
    );
    expectError(
      await node().http.inject({ method: 'POST', url: '/counters/rel2/increment?reliable=true&x=1' }),
      400,
      'invalid_request',
    );
    // Neither refused request reached the entity.
    const get = await node().http.inject({ method: 'GET', url: '/counters/rel2' });
    expect(get.json()).toMatchObject({ value: 0 });
  });
});
