// Reliable send under random hand-offs, crashes of the host and lossy windows (issue 23), on the in-memory
// transport with fake time: no resolved send is lost (each was processed somewhere), no send is processed
// twice on one host incarnation, and without crashes or loss each host sees a sender's messages in order.
// Across graceful moves alone, with confirmations lost and messages duplicated, every send is processed
// exactly once (the hosts' duplicate entries move with the shard).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NodeAddress } from '../../src/cluster/address.js';
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/index.js';
import {
  TestCluster,
  entityInShard,
  eventually,
  everyResolved,
  run,
  settle,
  useTestClusters,
  type TestNode,
} from './harness.js';

const SHARDS = 4;
const SHARD = 1;
const ENTITIES = [0, 1, 2].map((i) => entityInShard(SHARD, SHARDS, `p${i}-`));

type Step =
  | { readonly kind: 'send'; readonly entity: number; readonly count: number }
  | { readonly kind: 'move' }
  | { readonly kind: 'crash' }
  | { readonly kind: 'lossy'; readonly ms: number }
  /** The hosts' confirmations (EntityReplies) are lost for `ms`: the sender retries what was processed. */
  | { readonly kind: 'noReplies'; readonly ms: number }
  | { readonly kind: 'duplicate'; readonly ms: number }
  | { readonly kind: 'wait'; readonly ms: number };

/** A host's answer to an ask or a send, alone or coalesced. */
const isReply = (type: unknown): boolean => type === 'EntityReply' || type === 'EntityReplies';

interface Processed {
  readonly host: string;
  readonly entityId: string;
  readonly id: number;
}

/** Homes the shard on `target()` when it is a candidate, else on any candidate but the sender (a). */
function hostOn(target: () => string, sender: () => string): AllocationStrategy {
  return {
    allocate: (_shardId, candidates) => {
      const hosts = candidates.filter((c) => c.toString() !== sender());
      return (hosts.find((c) => c.toString() === target()) ?? hosts[0] ?? candidates[0]) as NodeAddress;
    },
    rebalance: () => new Set(),
  };
}

const windowArb = (kind: 'lossy' | 'noReplies' | 'duplicate') =>
  fc.record({ kind: fc.constant(kind), ms: fc.integer({ min: 50, max: 400 }) });

/** Crashes and loss (`faults`), or lost confirmations and duplicates (`retries`), besides sends and moves. */
const stepArb = (mode: 'faults' | 'retries' | 'none'): fc.Arbitrary<Step> =>
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('send' as const),
        entity: fc.integer({ min: 0, max: 2 }),
        count: fc.integer({ min: 1, max: 4 }),
      }),
    },
    { weight: 2, arbitrary: fc.constant({ kind: 'move' as const }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 300 }) }) },
    ...(mode === 'faults'
      ? [
          { weight: 1, arbitrary: fc.constant({ kind: 'crash' as const }) },
          { weight: 1, arbitrary: windowArb('lossy') },
        ]
      : []),
    ...(mode === 'retries'
      ? [
          { weight: 2, arbitrary: windowArb('noReplies') },
          { weight: 1, arbitrary: windowArb('duplicate') },
        ]
      : []),
  );

/** Each host processed each entity's messages from the sender in the order they were sent. */
function expectOrderPerHost(processed: ReadonlyArray<Processed>): void {
  const last = new Map<string, number>();
  for (const p of processed) {
    const key = `${p.host}/${p.entityId}`;
    expect(p.id).toBeGreaterThan(last.get(key) ?? 0);
    last.set(key, p.id);
  }
}

describe('reliable send: property', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

  async function runSchedule(
    steps: ReadonlyArray<Step>,
  ): Promise<{ processed: Processed[]; resolved: Map<number, string>; ids: number }> {
    // 5 ms a hop: sends are still in flight when a move or a crash comes.
    cluster = new TestCluster({ config: { downRemovalMarginMs: 0 }, delayMs: 5 });
    const processed: Processed[] = [];
    const behavior =
      (node: TestNode): EntityBehavior =>
      (ctx) => ({
        receive: (message) => {
          processed.push({ host: node.key, entityId: ctx.entityId, id: (message as { id: number }).id });
        },
      });
    let target = '';
    const [a, b] = cluster.addNodes(7001, 7002, 7003);
    target = b.key;
    let noReplies = false;
    for (const node of cluster.live()) {
      const send = node.transport.send.bind(node.transport);
      node.transport.send = (to, message) => {
        if (!noReplies || !isReply((message as { type?: unknown }).type)) send(to, message);
      };
    }
    const options = (node: TestNode) => ({
      typeName: 'T',
      behavior: behavior(node),
      numberOfShards: SHARDS,
      allocationStrategy: hostOn(
        () => target,
        () => a.key,
      ),
    });
    cluster.initAll(options);
    let nextPort = 7004;
    let nextId = 1;
    const resolved = new Map<number, string>();
    const pending: Array<Promise<unknown>> = [];
    const host = (): TestNode | undefined => cluster.live().find((n) => n.sharding.localShards('T').includes(SHARD));
    for (const step of steps) {
      if (step.kind === 'send') {
        const entityId = ENTITIES[step.entity] as string;
        for (let i = 0; i < step.count; i++) {
          const id = nextId++;
          pending.push(
            a.sharding
              .entityRefFor('T', entityId)
              .send({ id })
              .then(
                () => void resolved.set(id, entityId),
                () => undefined,
              ),
          );
        }
      } else if (step.kind === 'move') {
        const other = cluster.live().find((n) => n !== a && n !== host());
        if (other === undefined || host() === undefined) continue;
        target = other.key;
        await settle(a.sharding.rebalanceNow('T', [SHARD]).catch(() => undefined));
      } else if (step.kind === 'crash') {
        const victim = host();
        if (victim === undefined) continue;
        await cluster.crashAndRemove(victim);
        const fresh = cluster.addNode(nextPort++);
        fresh.sharding.init(options(fresh));
        target = fresh.key;
      } else if (step.kind === 'lossy' || step.kind === 'duplicate') {
        cluster.net.setFaults(step.kind === 'lossy' ? { dropRate: 0.3 } : { duplicateRate: 0.5 });
        await run(step.ms);
        cluster.net.setFaults({});
      } else if (step.kind === 'noReplies') {
        noReplies = true;
        await run(step.ms);
        noReplies = false;
      } else {
        await run(step.ms);
      }
    }
    cluster.net.setFaults({});
    await everyResolved(pending, 'every send settled', 70_000);
    return { processed, resolved, ids: nextId - 1 };
  }

  it('loses no resolved send and processes none twice on one host, across hand-offs, crashes and loss', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb('faults'), { minLength: 3, maxLength: 20 }), async (steps) => {
        const { processed, resolved } = await runSchedule(steps);
        const seen = new Set(processed.map((p) => p.id));
        for (const id of resolved.keys()) expect(seen.has(id)).toBe(true);
        const perHost = new Map<string, number>();
        for (const p of processed) {
          const key = `${p.host}/${p.id}`;
          perHost.set(key, (perHost.get(key) ?? 0) + 1);
        }
        for (const [key, count] of perHost) expect({ key, count }).toEqual({ key, count: 1 });
        await cluster.shutdown();
      }),
      { numRuns: 60, seed: 23 },
    );
  });

  it("keeps each sender's order per entity on every host when nothing crashes or is lost", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb('none'), { minLength: 3, maxLength: 20 }), async (steps) => {
        const { processed, resolved, ids } = await runSchedule(steps);
        expect(resolved.size).toBe(ids);
        expectOrderPerHost(processed);
        await cluster.shutdown();
      }),
      { numRuns: 40, seed: 24 },
    );
  });

  it('processes every send exactly once across graceful moves, with confirmations lost and messages duplicated', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb('retries'), { minLength: 3, maxLength: 20 }), async (steps) => {
        const { processed, resolved, ids } = await runSchedule(steps);
        expect(resolved.size).toBe(ids);
        const times = new Map<number, number>();
        for (const p of processed) times.set(p.id, (times.get(p.id) ?? 0) + 1);
        for (let id = 1; id <= ids; id++) expect({ id, times: times.get(id) }).toEqual({ id, times: 1 });
        expectOrderPerHost(processed);
        await cluster.shutdown();
      }),
      { numRuns: 40, seed: 25 },
    );
  });
});
