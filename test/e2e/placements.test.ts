// Issues 4 and 5, multi-process: explicit placements through the management API of CLI-started nodes.
// Measures how fast one placement reaches every node and how fast a shard lands on its target, and checks
// that two conflicting pins written at once on two nodes converge everywhere, the shard follows the winner,
// and the fallback re-homes it when the winner is killed.
import { describe, expect, it } from 'vitest';
import { compareHlc } from '../../crdt/hlc.js';
import { shardIdFor } from '../../src/sharding/core/shard-id.js';
import {
  homesOf,
  liveMembers,
  useProcessSet,
  SHARDS_PATH,
  waitFor,
  type CounterValue,
  type NodeProc,
  type PlacementRow,
} from './harness.js';
import { median, watchRehoming } from './traffic.js';

// Periodic rebalance effectively off: every move below must come from the prompt re-evaluation of a
// placement change or from an explicit rebalance call, not from a tick.
const NO_TICK_MS = 600_000;
const DOWN_AFTER_MS = 3000;

const procs = useProcessSet();

/** An entity id (prefix-N) whose shard lands on `host`, found by sending increments through `via`. */
async function entityHostedOn(
  host: NodeProc,
  via: NodeProc,
  prefix: string,
  avoidShards: ReadonlySet<number> = new Set(),
): Promise<CounterValue> {
  for (let i = 0; i < 200; i++) {
    const entityId = `${prefix}-${i}`;
    if (avoidShards.has(shardIdFor(entityId, 1000))) continue;
    const result = await via.increment(entityId);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    if (result.body.node === host.address) return result.body;
  }
  throw new Error(`no entity of ${prefix}-* landed on ${host.name}`);
}

/** Polls the counter route as fast as answers come until the entity answers from `target`. */
async function untilServedBy(
  via: NodeProc,
  entityId: string,
  target: string,
  timeoutMs: number,
  extra: (c: CounterValue) => boolean = () => true,
): Promise<CounterValue> {
  return waitFor(
    `${entityId} served by ${target}`,
    async () => {
      const result = await via.counter(entityId, 8000);
      return result.status === 200 && result.body.node === target && extra(result.body) ? result.body : undefined;
    },
    timeoutMs,
    0,
  );
}

interface DryRunMove {
  shardId: number;
  from: string;
  to: string | null;
}

/** The shards whose home changed between two snapshots, by shard id; a shard without a home after is `to: null`. */
function movesBetween(before: ReadonlyMap<number, string>, after: ReadonlyMap<number, string>): DryRunMove[] {
  const moves: DryRunMove[] = [];
  for (const [shardId, from] of before) {
    const to = after.get(shardId) ?? null;
    if (to !== from) moves.push({ shardId, from, to });
  }
  return moves.sort((x, y) => x.shardId - y.shardId);
}

function sameRows(rows: readonly PlacementRow[]): string {
  return JSON.stringify(rows.map((row) => [row.shardId, row.target, row.hlc.wallMs, row.hlc.counter, row.hlc.node]));
}

describe('placements across node processes (issues 4 and 5)', () => {
  it('measures placement propagation to every node and the time for a shard to reach its target', async () => {
    const [n1, n2, n3] = (await procs.startCluster(3, { rebalanceIntervalMs: NO_TICK_MS })) as [
      NodeProc,
      NodeProc,
      NodeProc,
    ];

    // 1. Propagation: POST on node 1, tight GET loops on nodes 2 and 3 until each shows that exact write.
    const fromSend: number[] = [];
    const fromAnswer: number[] = [];
    for (let sample = 0; sample < 7; sample++) {
      // Shards nobody uses, so no hand-off interferes with the timing.
      const shardId = 990 + sample;
      const target = (sample % 2 === 0 ? n3 : n2).address;
      const sentAt = performance.now();
      const posted = await n1.post<{ placements: PlacementRow[]; warnings: unknown[] }>(`${SHARDS_PATH}/placements`, {
        shardId,
        target,
      });
      const answeredAt = performance.now();
      expect(posted.status, JSON.stringify(posted.body)).toBe(202);
      expect(posted.body.warnings).toEqual([]);
      const written = posted.body.placements[0]!;
      expect(written).toMatchObject({ shardId, target });
      const seenAt = await Promise.all(
        [n2, n3].map((node) =>
          waitFor(
            `placement of shard ${shardId} on ${node.name}`,
            async () => {
              const rows = await node.placements();
              const row = rows.find((r) => r.shardId === shardId);
              return row !== undefined && row.target === target && compareHlc(row.hlc, written.hlc) === 0
                ? performance.now()
                : undefined;
            },
            10_000,
            0,
          ),
        ),
      );
      fromSend.push(Math.max(...seenAt) - sentAt);
      fromAnswer.push(Math.max(...seenAt) - answeredAt);
    }
    const fmt = (values: number[]): string =>
      `median ${median(values).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms`;
    console.log(
      `[e2e figures] placement propagation to every node (3 processes, ${fromSend.length} samples, POST on node 1, tight GET loop on nodes 2 and 3): ` +
        `from sending the POST ${fmt(fromSend)}; from its 202 ${fmt(fromAnswer)}`,
    );
    // All three replicas hold the same placements.
    const rows = await Promise.all([n1, n2, n3].map((node) => node.placements()));
    expect(sameRows(rows[1]!)).toBe(sameRows(rows[0]!));
    expect(sameRows(rows[2]!)).toBe(sameRows(rows[0]!));

    // 2. Prompt re-evaluation: pin a shard that lives on node 2 to node 3; no rebalance call, no tick. A dry
    // run of that pin first (through another node) names exactly the moves the write then makes (issue 12).
    const a = await entityHostedOn(n2, n1, 'moved');
    const homesBefore = homesOf(await n1.shards());
    const dry = await n2.post<{ dryRun: true; moves: DryRunMove[] }>(`${SHARDS_PATH}/placements?dryRun=true`, {
      shardId: a.shardId,
      target: n3.address,
    });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.moves).toContainEqual({ shardId: a.shardId, from: n2.address, to: n3.address });
    expect(homesOf(await n1.shards())).toEqual(homesBefore);
    let t = performance.now();
    expect((await n1.post(`${SHARDS_PATH}/placements`, { shardId: a.shardId, target: n3.address })).status).toBe(202);
    await untilServedBy(n1, a.entityId, n3.address, 20_000);
    const promptMs = performance.now() - t;
    expect(homesOf(await n1.shards()).get(a.shardId)).toBe(n3.address);
    const homesAfter = await waitFor('the hand-offs of the pin to end', async () => {
      const locations = await n1.shards();
      return locations.handingOff.length === 0 ? homesOf(locations) : undefined;
    });
    expect(movesBetween(homesBefore, homesAfter)).toEqual([...dry.body.moves].sort((x, y) => x.shardId - y.shardId));

    // 3. Pin + rebalance (what `placements set --move` does): a shard on node 1 pinned to node 2.
    const b = await entityHostedOn(n1, n3, 'pinned-and-moved', new Set([a.shardId]));
    const pinnedAt = performance.now();
    expect((await n3.post(`${SHARDS_PATH}/placements`, { shardId: b.shardId, target: n2.address })).status).toBe(202);
    t = performance.now();
    const moved = await n3.post<{ accepted: number[]; unallocated: number[] }>(`${SHARDS_PATH}/rebalance`, {
      shardIds: [b.shardId],
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(202);
    expect(moved.body.unallocated).toEqual([]);
    await untilServedBy(n3, b.entityId, n2.address, 20_000);
    const moveFromRebalanceMs = performance.now() - t;
    const moveFromPinMs = performance.now() - pinnedAt;

    // 4. rebalanceNow alone: the shard of `a` is on its target (node 3); rebalance hands it off and the
    // strategy puts it back there. The counter keeps its value: its state travels with the hand-off.
    let counted = 0;
    for (let i = 0; i < 3; i++) {
      const increment = await n1.increment(a.entityId);
      expect(increment.status).toBe(200);
      counted = increment.body.value;
    }
    t = performance.now();
    const again = await n2.post<{ accepted: number[]; homeless: number[] }>(`${SHARDS_PATH}/rebalance`, {
      shardIds: [a.shardId],
    });
    expect(again.status).toBe(202);
    expect(again.body.accepted).toEqual([a.shardId]);
    await waitFor('the hand-off of the rebalanced shard to end', async () =>
      (await n2.shards()).handingOff.length === 0 ? true : undefined,
    );
    const restarted = await untilServedBy(n2, a.entityId, n3.address, 20_000);
    const rebalanceMs = performance.now() - t;
    expect(restarted.value).toBe(counted);
    expect(restarted.shardId).toBe(a.shardId);
    expect(homesOf(await n2.shards()).get(a.shardId)).toBe(n3.address);

    console.log(
      `[e2e figures] shard to its target (periodic rebalance off): placement POST -> shard serving on the new target ` +
        `(prompt re-evaluation, no rebalance call) ${promptMs.toFixed(1)} ms; POST rebalance right after a pin -> shard serving on the target ` +
        `${moveFromRebalanceMs.toFixed(1)} ms (${moveFromPinMs.toFixed(1)} ms from the pin); ` +
        `POST rebalance of a pinned shard -> hand-off and new incarnation serving on its target ${rebalanceMs.toFixed(1)} ms`,
    );
  }, 120_000);

  it('conflicting pins written at once through two nodes converge, the shard follows the winner, the fallback takes over when the winner dies', async () => {
    const nodes = await procs.startCluster(3, { rebalanceIntervalMs: NO_TICK_MS, downAfterMs: DOWN_AFTER_MS });
    const [n1, n2, n3] = nodes as [NodeProc, NodeProc, NodeProc];

    // A shard on node 2, so it has to move whichever pin wins.
    const entity = await entityHostedOn(n2, n3, 'contested');
    const shardId = entity.shardId;

    const [viaOne, viaTwo] = await Promise.all([
      n1.post<{ placements: PlacementRow[] }>(`${SHARDS_PATH}/placements`, { shardId, target: n3.address }),
      n2.post<{ placements: PlacementRow[] }>(`${SHARDS_PATH}/placements`, { shardId, target: n1.address }),
    ]);
    expect(viaOne.status, JSON.stringify(viaOne.body)).toBe(202);
    expect(viaTwo.status, JSON.stringify(viaTwo.body)).toBe(202);
    const one = viaOne.body.placements[0]!;
    const two = viaTwo.body.placements[0]!;
    expect(compareHlc(one.hlc, two.hlc)).not.toBe(0);
    const expected = compareHlc(one.hlc, two.hlc) > 0 ? one : two;
    const winner = nodes.find((node) => node.address === expected.target)!;

    // Every node ends with the same placement: the write with the greater HLC.
    const views = await waitFor(
      'the same placement on every node',
      async () => {
        const all = await Promise.all(nodes.map((node) => node.placements()));
        return all.every((rows) => rows.length === 1 && rows[0]!.target === expected.target) ? all : undefined;
      },
      15_000,
      20,
    );
    for (const rows of views) {
      expect(rows).toEqual(views[0]);
      expect(rows[0]).toMatchObject({ shardId, target: expected.target, writer: expected.writer });
      expect(compareHlc(rows[0]!.hlc, expected.hlc)).toBe(0);
    }

    // The prompt re-evaluation moves the shard to the winner (no rebalance call, no periodic tick).
    for (const node of nodes) await untilServedBy(node, entity.entityId, winner.address, 30_000);
    expect(homesOf(await n3.shards()).get(shardId)).toBe(winner.address);
    console.log(
      `[e2e figures] conflicting pins of shard ${shardId}: node 1 wrote -> ${one.target}, node 2 wrote -> ${two.target}; winner ${winner.name} (${winner.address})`,
    );

    // Kill the winner: the fallback re-homes the shard on a survivor; the API keeps answering there.
    const survivors = nodes.filter((node) => node !== winner);
    const survivorAddresses = new Set(survivors.map((node) => node.address));
    const killedAt = Date.now();
    winner.signal('SIGKILL');
    await winner.exited;
    const rehomedAt = await watchRehoming([entity.entityId], survivors, survivorAddresses, 60_000);
    console.log(
      `[e2e figures] winner killed -> contested shard answering from a survivor (fallback): ` +
        `${(rehomedAt.get(entity.entityId) ?? NaN) - killedAt} ms (down-after-ms ${DOWN_AFTER_MS})`,
    );
    const answer = await survivors[0]!.counter(entity.entityId);
    expect(answer.status).toBe(200);
    const rehomed = answer.body;
    expect(survivorAddresses.has(rehomed.node)).toBe(true);
    expect(rehomed.shardId).toBe(shardId);

    for (const node of survivors) {
      const health = await node.get<{ status: string }>('/actor-ts/health');
      expect(health.status).toBe(200);
      expect(health.body.status).toBe('ok');
      await waitFor(
        `${node.name} to see two live members`,
        async () => JSON.stringify(await liveMembers(node)) === JSON.stringify([...survivorAddresses].sort()),
      );
      // The pin survives its target's death (replicated on every node); the shard stays with the fallback.
      expect(sameRows(await node.placements())).toBe(sameRows(views[0]!));
      const served = await node.counter(entity.entityId);
      expect(served.status).toBe(200);
      expect(served.body.node).toBe(rehomed.node);
      const homes = await waitFor(`${node.name}'s shard locations without the winner`, async () => {
        const locations = await node.shards();
        return locations.regions.every((region) => survivorAddresses.has(region.address))
          ? homesOf(locations)
          : undefined;
      });
      expect(homes.get(shardId)).toBe(rehomed.node);
    }
    // Writes still work on the survivors and replicate between them.
    const [s1, s2] = survivors as [NodeProc, NodeProc];
    expect((await s1.post(`${SHARDS_PATH}/placements`, { shardId: 7, target: s2.address })).status).toBe(202);
    await waitFor('the new placement on the other survivor', async () =>
      (await s2.placements()).some((row) => row.shardId === 7 && row.target === s2.address),
    );
  }, 150_000);
});
