// Cluster membership over real loopback sockets: every cluster message crosses the TCP codec.
import { afterEach, describe, expect, it } from 'vitest';
import { Cluster } from '../../src/cluster/cluster.js';
import { TcpTransport } from '../../src/cluster/tcp-transport.js';
import { waitFor } from './wait-for.js';
import { FAST_TCP_CLUSTER } from './cluster-harness.js';

const running: Array<{ cluster: Cluster; transport: TcpTransport }> = [];

afterEach(async () => {
  for (const { cluster } of running) cluster.shutdown();
  await Promise.all(running.splice(0).map(({ transport }) => transport.close()));
});

describe('Cluster over TCP', () => {
  it('joins three processes-worth of nodes, downs a killed one, and lets a node leave', async () => {
    const transports = await Promise.all(
      [1, 2, 3].map(() =>
        TcpTransport.start({
          system: 'tcp',
          secret: 'cluster-secret',
          backoff: { initialDelayMs: 20, maxDelayMs: 200 },
        }),
      ),
    );
    const seed = transports[0]!.self;
    const clusters = transports.map((transport) => {
      const cluster = new Cluster({ transport, config: { ...FAST_TCP_CLUSTER, seedNodes: [seed] } });
      running.push({ cluster, transport });
      cluster.start();
      return cluster;
    });
    await Promise.all(clusters.map((c) => c.whenUp()));
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
