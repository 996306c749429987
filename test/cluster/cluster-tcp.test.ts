// Cluster membership over real loopback sockets: every cluster message crosses the TCP codec.
import { afterEach, describe, expect, it } from 'vitest';
import { TcpClusters } from './tcp-clusters.js';
import { waitFor } from './wait-for.js';

const tcpClusters = new TcpClusters();
afterEach(() => tcpClusters.cleanUp());

describe('Cluster over TCP', () => {
  it('joins three processes-worth of nodes, downs a killed one, and lets a node leave', async () => {
    const { transports, clusters } = await tcpClusters.start(3, { secret: 'cluster-secret' });
    await waitFor(
      () => clusters.every((c) => c.members().length === 3 && c.members().every((m) => m.status === 'up')),
      'all up',
    );
    expect(clusters[2]!.incarnation).toBe(transports[2]!.incarnation);

    // "Kill" node 3: no leave, its sockets just go away.
    clusters[2]!.shutdown();
    await transports[2]!.close();
    await waitFor(
      () => clusters[0]!.members().length === 2 && clusters[1]!.members().length === 2,
      'node 3 downed and removed',
      15_000,
    );

    await clusters[1]!.leave();
    await waitFor(() => clusters[0]!.members().length === 1, 'node 2 removed after leaving', 15_000);
    expect(clusters[0]!.members()[0]?.status).toBe('up');
  });
});
