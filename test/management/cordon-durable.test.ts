// A cordon is placement-store state: on a node with a data directory it is back after a full restart,
// before the node has heard from anyone, with its author and reason.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startNode, type RunningNode } from '../../src/node/node.js';
import { API, startTestNode, stopAll } from './node-fixture.js';

const root = mkdtempSync(join(tmpdir(), 'placement-cordon-storage-'));
const started: RunningNode[] = [];
afterAll(async () => {
  await stopAll(started);
  rmSync(root, { recursive: true, force: true });
});

describe('a cordon on a node with --data-dir', () => {
  it('survives a full restart', async () => {
    const dataDir = join(root, 'restart');
    const first = await startTestNode({ dataDir });
    started.push(first);
    const address = first.address.toString();
    const response = await first.http.inject({
      method: 'POST',
      url: `${API}/cluster/members/${encodeURIComponent(address)}/cordon`,
      payload: { by: 'ops', reason: 'disk swap' },
    });
    expect(response.statusCode, response.body).toBe(202);
    await first.stop();

    const second = await startNode({ dataDir, port: first.address.port, http: { port: 0 }, logLevel: 'silent' });
    started.push(second);
    expect(second.sharding.cordons.list()).toMatchObject([{ address, by: 'ops', reason: 'disk swap' }]);
    // Entity types listed from the store never show the cordons' namespace.
    expect(second.sharding.placementStore.typeNames().some((name) => name.startsWith('@'))).toBe(true);
    await second.counterPlacements.setPlacement(3, address);
    const metrics = await second.http.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/placements\{[^}]*type="Counter"/);
    expect(metrics.body).not.toContain('@cordons');
    await second.stop();
  });
});
