// src/node/node.ts wiring: a node that fails to start releases its port (the process can exit), and the
// cluster settings a user passes in NodeConfig.cluster reach the membership (failure detector, heartbeats).
import { describe, expect, it } from 'vitest';
import { TcpTransport } from '../../src/cluster/transport/tcp-transport.js';
import { silentLogger } from '../../src/logging.js';
import { startNode } from '../../src/node/node.js';

async function freePort(): Promise<number> {
  const probe = await TcpTransport.start({ system: 'probe' });
  const port = probe.self.port;
  await probe.close();
  return port;
}

describe('startNode', () => {
  it('releases the cluster port when the configuration is refused after the transport started', async () => {
    const port = await freePort();
    await expect(
      startNode({ port, http: { port: 0 }, cluster: { downAfterMs: -1 } }, { logger: silentLogger() }),
    ).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(
      startNode({ port, http: { port: 0 }, sharding: { bufferSize: -5 } }, { logger: silentLogger() }),
    ).rejects.toMatchObject({ code: 'invalid_argument' });
    // Still bound, this would fail with "address in use".
    const again = await TcpTransport.start({ system: 'app', port });
    await again.close();
  });

  it('passes failure detector and heartbeat settings through to the cluster', async () => {
    const node = await startNode(
      {
        port: 0,
        http: { port: 0 },
        cluster: {
          heartbeatIntervalMs: 250,
          downAfterMs: 3_000,
          failureDetector: { threshold: 10, acceptableHeartbeatPauseMs: 1_000, firstHeartbeatEstimateMs: 250 },
        },
      },
      { logger: silentLogger() },
    );
    try {
      expect(node.cluster.config.heartbeatIntervalMs).toBe(250);
      expect(node.cluster.config.downAfterMs).toBe(3_000);
      expect(node.cluster.config.failureDetector).toMatchObject({
        threshold: 10,
        acceptableHeartbeatPauseMs: 1_000,
        firstHeartbeatEstimateMs: 250,
        minStdDeviationMs: 100,
      });
    } finally {
      await node.stop();
    }
    expect(await node.stopped).toBe('left');
  });
});
