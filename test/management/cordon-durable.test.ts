// A cordon is placement-store state: on a node with a data directory it is back after a full restart,
// before the node has heard from anyone, with its author and reason.
import { describe, expect, it } from 'vitest';
import { startNode } from '../../src/node/node.js';
import { API } from './node-fixture.js';
import { useDataRoot } from '../support/data-root.js';

const data = useDataRoot('placement-cordon-storage-');

describe('a cordon on a node with --data-dir', () => {
  it('survives a full restart', async () => {
    const dataDir = data.dir('restart');
    const first = await data.start('restart');
    const address = first.address.toString();
    const response = await first.http.inject({
      method: 'POST',
      url: `${API}/cluster/members/${encodeURIComponent(address)}/cordon`,
      payload: { by: 'ops', reason: 'disk swap' },
    });
    expect(response.statusCode, response.body).toBe(202);
    await first.stop();

    const second = await startNode({ dataDir, port: first.address.port, http: { port: 0 }, logLevel: 'silent' });
    data.started.push(second);
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
