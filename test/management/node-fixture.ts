// Test fixture for the management API: real in-process nodes on ephemeral ports, requests through Fastify's
// inject, and the polling (test/support/poll.ts) and error-shape checks the route and CLI tests share.
import { afterAll, beforeAll, expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { startNode, type RunningNode, type StartNodeInput } from '../../src/node/node.js';
import type { NodeConfigInput } from '../../src/node/config.js';
import { waitForFormedCluster } from '../support/node-cli.js';
import { poll } from '../support/poll.js';
import { checkedAnswer } from '../support/api-answers.js';
import { PlacementsAnswer, ShardLocationsAnswer } from '../../src/management/api-shapes.js';

export const API = '/actor-ts';
export const COUNTER = `${API}/cluster/shards/Counter`;

/** Fast gossip and replication so multi-node tests converge in well under a second or two. */
const FAST = {
  port: 0,
  http: { port: 0 },
  logLevel: 'silent',
  antiEntropyIntervalMs: 200,
  cluster: { gossipIntervalMs: 100, heartbeatIntervalMs: 200, retryJoinIntervalMs: 200, seedNodeTimeoutMs: 1_000 },
} satisfies NodeConfigInput;

/** Starts a node and waits until it is Up (its own health route says ok). */
export async function startTestNode(config: StartNodeInput = {}): Promise<RunningNode> {
  // `http` and `cluster` field by field: a test's limits keep the ephemeral port, its cluster settings the fast gossip.
  const http = { ...FAST.http, ...config.http };
  const node = await startNode({ ...FAST, ...config, http, cluster: { ...FAST.cluster, ...config.cluster } });
  // With authReads the health route itself needs the token.
  const headers = config.authToken ? { authorization: `Bearer ${config.authToken}` } : {};
  await pollUntil(async () => {
    const health = await node.http.inject({ method: 'GET', url: `${API}/health`, headers });
    return health.statusCode === 200 && health.json<{ status: string }>().status === 'ok';
  }, `${node.address.toString()} to be up`);
  return node;
}

/**
 * Starts `count` nodes, the first forming the cluster and the rest seeded from it, and waits until each sees all Up and
 * reachable.
 */
export async function startTestCluster(count: number, config: StartNodeInput = {}): Promise<RunningNode[]> {
  const first = await startTestNode(config);
  const rest = await Promise.all(
    Array.from({ length: count - 1 }, () => startTestNode({ ...config, seeds: [first.address.toString()] })),
  );
  const nodes = [first, ...rest];
  await waitForFormedCluster(
    nodes.map((node) => node.httpUrl),
    nodes.map((node) => node.address.toString()),
    { timeoutMs: 20_000, intervalMs: 20 },
  );
  return nodes;
}

export async function stopAll(nodes: ReadonlyArray<RunningNode | undefined>): Promise<void> {
  await Promise.all(nodes.map((node) => node?.stop()));
}

/** A node started before the tests of the enclosing describe block and stopped after them; call the result for it. */
export function useTestNode(config: NodeConfigInput = {}): () => RunningNode {
  let node: RunningNode | undefined;
  beforeAll(async () => {
    node = await startTestNode(config);
  });
  afterAll(() => stopAll([node]));
  return () => {
    if (node === undefined) throw new Error('the test node did not start');
    return node;
  };
}

/** Polls an async condition until it holds or the deadline passes; a condition that throws fails at once. */
export async function pollUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  await poll(what, condition, { timeoutMs, intervalMs: 20, retryOnError: false });
}

/** The API's error shape: exactly `{ error, message }`, both non-empty strings, with the expected status and code. */
export function expectError(
  response: LightMyRequestResponse,
  status: number,
  code: string,
): { error: string; message: string } {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json<{ error: string; message: string }>();
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(code);
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  return body;
}

export async function getPlacements(node: RunningNode, typePath = COUNTER): Promise<PlacementsAnswer> {
  const response = await node.http.inject({ method: 'GET', url: `${typePath}/placements` });
  expect(response.statusCode).toBe(200);
  return checkedAnswer(PlacementsAnswer, response.json());
}

export async function getLocations(node: RunningNode): Promise<ShardLocationsAnswer> {
  const response = await node.http.inject({ method: 'GET', url: COUNTER });
  expect(response.statusCode).toBe(200);
  return checkedAnswer(ShardLocationsAnswer, response.json());
}

/** Sends one message to a counter entity, which allocates its shard; returns the entity's answer. */
export async function increment(
  node: RunningNode,
  entityId: string,
): Promise<{ entityId: string; shardId: number; value: number; node: string }> {
  const response = await node.http.inject({ method: 'POST', url: `/counters/${entityId}/increment` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** Removes every explicit placement of Counter through the API, so each test starts from none. */
export async function clearPlacements(node: RunningNode, headers: Record<string, string> = {}): Promise<void> {
  for (const { shardId } of (await getPlacements(node)).placements) {
    const response = await node.http.inject({ method: 'DELETE', url: `${COUNTER}/placements/${shardId}`, headers });
    expect(response.statusCode).toBe(204);
  }
}

/** Where a shard lives according to a node's answer, or undefined while it has no home. */
export function homeOf(locations: ShardLocationsAnswer, shardId: number): string | undefined {
  return locations.regions.find((region) => region.shards.includes(shardId))?.address;
}
