// Test set-up for the management and CLI tests on a real in-process cluster: `count` nodes started once for the
// enclosing describe block (startTestCluster: formed, every node Up and reachable) and stopped after it.
import { afterAll, beforeAll } from 'vitest';
import type { RunningNode } from '../../src/node/node.js';
import { startTestCluster, stopAll } from '../management/node-fixture.js';

/**
 * The cluster's nodes and their addresses, in start order, and the first node's management URL; filled in by the
 * time the block's own beforeAll runs.
 */
export interface TestCluster {
  nodes: RunningNode[];
  addresses: string[];
  url: string;
}

/** Registers the hooks that start and stop the cluster in the enclosing describe block. */
export function useTestCluster(count: number): Readonly<TestCluster> {
  const cluster: TestCluster = { nodes: [], addresses: [], url: '' };
  beforeAll(async () => {
    cluster.nodes = await startTestCluster(count);
    cluster.addresses = cluster.nodes.map((n) => n.address.toString());
    cluster.url = cluster.nodes[0]!.httpUrl;
  }, 40_000);
  afterAll(() => stopAll(cluster.nodes), 40_000);
  return cluster;
}
