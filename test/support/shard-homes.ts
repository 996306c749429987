// Test helper for the management and CLI tests on real nodes: where a shard lives as one node's locations route
// says, and the wait until it lives on a given node (hand-offs and replication are asynchronous).
import type { RunningNode } from '../../src/node/node.js';
import { getLocations, homeOf, pollUntil } from '../management/node-fixture.js';

/** The address hosting `shardId` as `node`'s locations route says, or undefined while it has no home. */
export async function homeOn(node: RunningNode, shardId: number): Promise<string | undefined> {
  return homeOf(await getLocations(node), shardId);
}

/** Waits until `node`'s locations route puts `shardId` on `target`; `what` names the wait in a timeout. */
export async function waitForHome(node: RunningNode, shardId: number, target: string, what: string): Promise<void> {
  await pollUntil(async () => (await homeOn(node, shardId)) === target, what);
}
