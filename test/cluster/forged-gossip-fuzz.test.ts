// Property: forged but well-formed membership messages (random statuses, upNumbers, versions up to 2^53-1,
// reachability rows, tombstones and seen marks, over the real member keys and invented ones), sent as Gossip
// or GossipNews from a node that is not a member and from a member, leave every honest node alive and a
// member, and the honest nodes converge with each other up and reachable.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { keyOf, type MemberRecord } from '../../src/cluster/membership/gossip.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { CLUSTER_MESSAGES } from '../../src/cluster/membership/messages.js';
import type { ObserverRow } from '../../src/cluster/membership/reachability-table.js';
import { runFor, useFakeTime } from '../support/fake-time.js';
import { address, advanceUntil, createNode, type TestNode } from './cluster-harness.js';
import { gossip, TOP_VERSION } from './forgery.js';
import { STATUSES } from './gossip-arbitraries.js';

let nodes: TestNode[] = [];
function stopAll(): void {
  for (const n of nodes) n.cluster.shutdown();
  nodes = [];
}
useFakeTime(stopAll);

const HONEST = 3;

/** A member record: one of the four real members (index 0..3) or an invented one. */
const recordArb = fc.record({
  who: fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 4 }).map((i) => ({ port: 2550 + i, incarnation: `inc-${i}` })) },
    {
      weight: 1,
      arbitrary: fc.record({
        port: fc.integer({ min: 2540, max: 2560 }),
        incarnation: fc.constantFrom('x', 'inc-9', 'inc-1'),
      }),
    },
  ),
  status: fc.constantFrom(...STATUSES),
  upNumber: fc.oneof(fc.integer({ min: 0, max: 6 }), fc.constant(TOP_VERSION)),
  downedAtMs: fc.option(fc.oneof(fc.nat(10), fc.constant(TOP_VERSION)), { nil: undefined }),
});

const versionArb = fc.oneof(
  fc.integer({ min: 0, max: 4 }),
  fc.constant(TOP_VERSION),
  fc.integer({ min: 0, max: TOP_VERSION }),
);

const messageArb = fc.record({
  records: fc.array(recordArb, { minLength: 1, maxLength: 6 }),
  rows: fc.array(fc.tuple(fc.nat(5), versionArb, fc.array(fc.nat(5), { maxLength: 5 })), { maxLength: 5 }),
  tombstones: fc.array(fc.tuple(fc.nat(5), fc.oneof(fc.nat(100), fc.constant(TOP_VERSION))), { maxLength: 3 }),
  seenAll: fc.boolean(),
  news: fc.boolean(),
  fromMember: fc.boolean(),
  target: fc.integer({ min: 1, max: HONEST }),
});

type Forged = typeof messageArb extends fc.Arbitrary<infer T> ? T : never;

function forge(m: Forged): ReturnType<typeof gossip> {
  // The receiver's own record, as it is: gossip that does not know the receiver is from another cluster.
  const receiver = {
    who: { port: 2550 + m.target, incarnation: `inc-${m.target}` },
    status: 'up' as const,
    upNumber: m.target,
    downedAtMs: undefined,
  };
  const records: MemberRecord[] = [receiver, ...m.records].map(({ who, status, upNumber, downedAtMs }) => ({
    address: new NodeAddress('sys', '127.0.0.1', who.port),
    incarnation: who.incarnation,
    status,
    appVersion: '1.0.0',
    roles: [],
    upNumber,
    ...(downedAtMs === undefined ? {} : { downedAtMs }),
  }));
  const keys = records.map(keyOf);
  const at = (i: number): string => keys[i % keys.length]!;
  const reachability = new Map<string, ObserverRow>();
  for (const [observer, version, subjects] of m.rows)
    reachability.set(at(observer), { version, subjects: new Set(subjects.map(at)) });
  const tombstones = new Map(m.tombstones.map(([i, when]) => [at(i), when] as const));
  const members = new Map(records.map((r) => [keyOf(r), r] as const));
  return gossip(
    { members, seen: m.seenAll ? new Set(keys) : new Set(), tombstones, reachability },
    m.news ? 'GossipNews' : 'Gossip',
  );
}

async function startCluster(network: MemoryNetwork): Promise<TestNode[]> {
  for (let i = 1; i <= HONEST + 1; i++) {
    const node = createNode(network, i);
    nodes.push(node);
    node.cluster.start();
    await advanceUntil(() => node.cluster.selfMember()?.status === 'up', `node ${i} up`);
  }
  return nodes;
}

/** Every honest node up, seeing every honest node up and reachable, and converged with them. */
function honestHealthy(honest: ReadonlyArray<TestNode>): boolean {
  return honest.every((n) => {
    const view = n.cluster.members();
    return (
      n.cluster.selfMember()?.status === 'up' &&
      honest.every((h) => view.some((m) => m.address.equals(h.address) && m.status === 'up' && m.reachable)) &&
      n.cluster.isConverged()
    );
  });
}

describe('Cluster: fuzzed forged membership messages', () => {
  it('leave every honest node alive, a member, and converged with the others', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(messageArb, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 1000 }),
        async (messages, seed) => {
          stopAll();
          const network = new MemoryNetwork({ seed });
          const all = await startCluster(network);
          const honest = all.slice(0, HONEST);
          const ends: string[] = [];
          for (const n of honest) {
            n.cluster.onSelfDown(() => ends.push(`${n.address.toString()} down`));
            n.cluster.onSelfRemoved(() => ends.push(`${n.address.toString()} removed`));
          }
          const outsider = network.transport(address(90 + (seed % 5)));
          outsider.register(CLUSTER_MESSAGES);
          for (const m of messages)
            (m.fromMember ? all[HONEST]!.transport : outsider).send(address(m.target), forge(m));
          // Long enough for any downing the messages could cause (stable-after and the minority delay are 10 s).
          await runFor(15_000);
          await advanceUntil(() => honestHealthy(honest), 'honest nodes healthy and converged', 60_000, 100);
          expect(ends).toEqual([]);
        },
      ),
      { numRuns: 60, seed: 27 },
    );
  }, 120_000);
});
