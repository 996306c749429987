// A consumer of the installed package (copied into a fresh project by packed.test.ts): two nodes started with
// `startNode` on free ports form a cluster, and an entity asked through one node answers from its home.
// Prints what it saw as one line `RESULT <json>` (the nodes' logs go to stdout too); exits 1 on any failure or
// after 30 s.
import { startNode, type RunningNode } from '@actor-ts/placement';

const quiet = {
  logLevel: 'error',
  host: '127.0.0.1',
  port: 0,
  http: { port: 0 },
  sharding: { coordinatorWarmupMs: 0 },
} as const;
const deadline = setTimeout(() => {
  console.error('timed out');
  process.exit(1);
}, 30_000);

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 50));
}

const nodes: RunningNode[] = [];
try {
  const first = await startNode(quiet);
  nodes.push(first);
  const second = await startNode({ ...quiet, seeds: [first.address.toString()] });
  nodes.push(second);
  const upEverywhere = (node: RunningNode) => node.cluster.members().filter((m) => m.status === 'up').length === 2;
  await until(() => nodes.every(upEverywhere));
  const reply = await second.sharding
    .entityRefFor('Counter', 'alice')
    .ask<{ value: number; node: string; shardId: number }>({ op: 'increment' });
  const again = await first.sharding
    .entityRefFor('Counter', 'alice')
    .ask<{ value: number; node: string }>({ op: 'increment' });
  const response = await fetch(`${first.httpUrl}/actor-ts/health`);
  console.log(
    'RESULT ' + JSON.stringify({ members: first.cluster.members().length, reply, again, health: response.status }),
  );
} finally {
  await Promise.all(nodes.map((node) => node.stop()));
  clearTimeout(deadline);
}
