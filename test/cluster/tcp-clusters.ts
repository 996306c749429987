// Test helper: real Cluster nodes over real loopback TCP in one process, formed with the first as seed and the fast
// TCP settings of cluster-harness.ts, and shut down (transports closed) after each test.
import { Cluster } from '../../src/cluster/membership/cluster.js';
import { TcpTransport, type TcpTransportOptions } from '../../src/cluster/transport/tcp-transport.js';
import { FAST_TCP_CLUSTER } from './cluster-harness.js';

/** The clusters of one test file; `cleanUp` in afterEach. */
export class TcpClusters {
  private readonly running: Array<{ cluster: Cluster; transport: TcpTransport }> = [];

  /** Starts `count` nodes seeded from the first one and waits until each is Up itself. */
  async start(
    count: number,
    options: Partial<TcpTransportOptions> = {},
  ): Promise<{ transports: TcpTransport[]; clusters: Cluster[] }> {
    const transports = await Promise.all(
      Array.from({ length: count }, () =>
        TcpTransport.start({ system: 'tcp', backoff: { initialDelayMs: 20, maxDelayMs: 200 }, ...options }),
      ),
    );
    const seed = transports[0]!.self;
    const clusters = transports.map((transport) => {
      const cluster = new Cluster({ transport, config: { ...FAST_TCP_CLUSTER, seedNodes: [seed] } });
      this.running.push({ cluster, transport });
      cluster.start();
      return cluster;
    });
    await Promise.all(clusters.map((c) => c.whenUp()));
    return { transports, clusters };
  }

  /** A cluster built by the test itself, shut down with the others. */
  adopt(cluster: Cluster, transport: TcpTransport): void {
    this.running.push({ cluster, transport });
  }

  async cleanUp(): Promise<void> {
    for (const { cluster } of this.running) cluster.shutdown();
    await Promise.all(this.running.splice(0).map(({ transport }) => transport.close()));
  }
}
