// Property: random concurrent set/remove on three nodes under random delivery faults (drops, duplicates,
// reordering, partitions) always ends, after healing and anti-entropy, with every node's strategy state
// equal; and after a rebalance every pinned shard whose target is a live member runs on that target.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { eventually, run, settle } from '../sharding/harness.js';
import { ExternalCluster, TYPE, addressOf, pinsOf } from './harness.js';

const SHARDS = 8;
const DEAD = addressOf(7999).toString();

type Op =
  | { readonly kind: 'set'; readonly node: number; readonly shard: number; readonly target: number }
  | { readonly kind: 'remove'; readonly node: number; readonly shard: number }
  | { readonly kind: 'wait'; readonly ms: number }
  | { readonly kind: 'cut'; readonly node: number }
  | { readonly kind: 'heal' };

const node = fc.integer({ min: 0, max: 2 });
const shard = fc.integer({ min: 0, max: SHARDS - 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('set' as const), node, shard, target: fc.integer({ min: 0, max: 3 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), node, shard }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 30 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), node }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'heal' as const }) },
);
const faults = fc.record({
  dropRate: fc.double({ min: 0, max: 0.6, noNaN: true }),
  duplicateRate: fc.double({ min: 0, max: 0.3, noNaN: true }),
  jitterMs: fc.integer({ min: 0, max: 20 }),
  reorder: fc.boolean(),
});

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('placements under faults (property)', () => {
  it('converge on every node and are honoured after healing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 30 }),
        faults,
        fc.integer({ min: 1, max: 1_000_000 }),
        async (ops, fault, seed) => {
          const cluster = new ExternalCluster({ seed, numberOfShards: SHARDS, antiEntropyIntervalMs: 200 });
          try {
            const nodes = [cluster.addNode(7001), cluster.addNode(7002), cluster.addNode(7003)];
            const targets = [...nodes.map((n) => n.key), DEAD];
            await run(600);
            for (let s = 0; s < SHARDS; s++) cluster.touch(nodes[s % 3]!, s);
            await eventually(() => cluster.hosted().size === SHARDS, 'every shard allocated');

            cluster.net.setFaults(fault);
            for (const step of ops) {
              switch (step.kind) {
                case 'set':
                  await nodes[step.node]!.controller.setPlacements([
                    { shardId: step.shard, target: targets[step.target]! },
                  ]);
                  break;
                case 'remove':
                  await nodes[step.node]!.controller.removePlacement(step.shard);
                  break;
                case 'wait':
                  await run(step.ms);
                  break;
                case 'cut':
                  cluster.net.isolate(nodes[step.node]!.address);
                  break;
                case 'heal':
                  cluster.net.heal();
                  break;
              }
            }
            cluster.net.heal();
            cluster.net.setFaults({});

            const agreed = (): boolean =>
              nodes.every((n) => JSON.stringify(pinsOf(n)) === JSON.stringify(pinsOf(nodes[0]!)));
            await eventually(agreed, 'replicas agree', 20_000);
            const state = nodes.map((n) => pinsOf(n));
            expect(state[1]).toEqual(state[0]);
            expect(state[2]).toEqual(state[0]);

            const coordinator = nodes[0]!.sharding;
            const busy = (): number => coordinator.stats().types[TYPE]?.coordinator?.rebalanceInProgress ?? 0;
            await eventually(() => busy() === 0, 'hand-offs finished', 20_000);
            await settle(coordinator.requestRebalance(TYPE));
            for (let s = 0; s < SHARDS; s++) cluster.touch(nodes[0]!, s);
            const live = new Set(nodes.map((n) => n.key));
            const pinnedLive = state[0]!.filter(([, target]) => live.has(target));
            await eventually(
              () => pinnedLive.every(([s, target]) => cluster.hostOf(s) === target),
              `pinned shards on their targets: ${JSON.stringify(pinnedLive)}`,
              20_000,
            );
          } finally {
            await cluster.shutdown();
          }
        },
      ),
      { numRuns: 200 },
    );
  }, 60_000);
});
