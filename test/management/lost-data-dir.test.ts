// Issue 25, "a deleted data directory goes unnoticed": `rm -rf` of a running node's data directory. Before,
// health stayed ok and pins were answered 202 into the unlinked file (gone at restart). Now the node
// notices within its check interval: health degraded naming the file and how to recover, writes 503.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API, COUNTER, expectError, pollUntil } from './node-fixture.js';
import { useDataRoot } from '../support/data-root.js';

const data = useDataRoot('placement-lost-dir-');

interface Health {
  status: string;
  storage: { failure: string | null };
}

describe('a node whose data directory is deleted while it runs', () => {
  it('reports degraded with the reason, refuses pins with 503 storage_unavailable, and counts it in /metrics', async () => {
    const dataDir = data.dir('node');
    const node = await data.start('node');
    const target = node.address.toString();
    const pin = (shardId: number) =>
      node.http.inject({ method: 'POST', url: `${COUNTER}/placements`, payload: { shardId, target } });
    expect((await pin(1)).statusCode).toBe(202);

    rmSync(dataDir, { recursive: true, force: true });
    let health: Health | undefined;
    await pollUntil(async () => {
      health = (await node.http.inject({ method: 'GET', url: `${API}/health` })).json<Health>();
      return health.storage.failure !== null;
    }, 'health to name the deleted data directory');
    expect(health?.status).toBe('degraded');
    expect(health?.storage.failure).toContain(`${join(dataDir, 'placement.mdb')} was deleted or moved`);
    expect(health?.storage.failure).toContain('To recover: restart this node');

    const refused = expectError(await pin(2), 503, 'storage_unavailable');
    expect(refused.message).toContain('was deleted or moved');
    const metrics = (await node.http.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^actor_ts_placement_storage_failed 1$/m);
    expect(metrics).toMatch(/^actor_ts_placement_writes_refused_total\{code="storage_unavailable"\} [1-9]\d*$/m);
  });
});
