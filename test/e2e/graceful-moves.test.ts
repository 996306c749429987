// Issue 23, multi-process: one three-node cluster of CLI nodes, 20 counter entities receiving reliable sends at
// 50/s, while the placement actions this project exists for run one after another: a drain, `placements set
// --move`, a rebalance, a graceful leave of the oldest node (the coordinator's) and a rolling restart of all
// three. Every send is answered `processed` and applied exactly once, and each counter's applied values run
// 1, 2, 3, ... across every move: its state travelled with it, never reset. Figures per action are printed.
import { describe, expect, it } from 'vitest';
import { run as cli } from '../cli/cli-runner.js';
import { HTTP_MAX_CONNECTIONS, SENDS_PER_SECOND } from './crash-scenario.js';
import { useProcessSet, waitFor, type CounterValue, type NodeProc } from './harness.js';
import { ProcessingLog, tally, valueBreaks, type SendRecord } from './processing-log.js';
import { SendLoad, restartUnderLoad, servingInTurn } from './send-load.js';
import { inBatches } from './traffic.js';
import { sleep } from '../support/poll.js';

const DOWN_AFTER_MS = 3000;
const ENTITIES = Array.from({ length: 20 }, (_, i) => `moving-${i}`);

const procs = useProcessSet();

interface Phase {
  readonly name: string;
  readonly from: number;
  readonly to: number;
}

async function homeOf(via: NodeProc, entityId: string): Promise<CounterValue> {
  const answer = await via.counter(entityId);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

function describePhase(phase: Phase, sends: readonly SendRecord[], result: ReturnType<typeof tally>): string {
  const longest = Math.max(0, ...sends.map((send) => (send.doneAt ?? Infinity) - send.sentAt));
  return (
    `${phase.name} (${phase.to - phase.from} ms): sent ${result.sent}, resolved ${result.resolved}, ` +
    `lost ${result.lost.length}, processed twice ${result.processedTwice}, longest send ${longest} ms`
  );
}

describe('state and sends across graceful moves under load (issue 23)', () => {
  it('drain, placements set --move, rebalance, graceful leave and a rolling restart: values continue, no send lost or twice', async () => {
    const log = new ProcessingLog(procs.logDir);
    // Rounds every 4 s (not 10): the returned node gets shards back while the next restart begins.
    const options = {
      downAfterMs: DOWN_AFTER_MS,
      rebalanceIntervalMs: 4_000,
      httpMaxConnections: HTTP_MAX_CONNECTIONS,
      nodeArgs: log.nodeArgs,
    };
    const nodes = await procs.startCluster(3, options);
    // Each entity starts at 1 (an ask creates it), spread over the three nodes.
    await inBatches(ENTITIES, 10, (entityId) => nodes[0]!.increment(entityId));

    // Sends go through the nodes in turn, skipping one about to stop and one not yet joined.
    const serving = new Set<NodeProc>(nodes);
    const through = servingInTurn(nodes, serving);
    const load = new SendLoad(ENTITIES, through, SENDS_PER_SECOND, 'moving').start();
    const phases: Phase[] = [];
    const phase = async (name: string, action: () => Promise<void>): Promise<void> => {
      const from = Date.now();
      await action();
      // A second more of sends to the new homes belongs to the action's figures.
      await sleep(1_000);
      phases.push({ name, from, to: Date.now() });
    };

    /** SIGTERM (a graceful leave) of nodes[slot], then the same node again as a new incarnation on its ports. */
    const restart = (slot: number): Promise<void> =>
      restartUnderLoad(procs, nodes, serving, load, slot, { ...options, name: `${nodes[slot]!.name}'` });

    await waitFor('the first sends processed', () => load.resolved >= SENDS_PER_SECOND, 15_000, 50);
    const [n1, n2, n3] = nodes as [NodeProc, NodeProc, NodeProc];
    await phase('drain of node 2', async () => {
      const drained = await cli('drain', n2.address, '--wait', '--reason', 'e2e under load', '--url', n1.url);
      expect(drained.code, [...drained.out, ...drained.err].join('\n')).toBe(0);
      expect((await cli('uncordon', n2.address, '--url', n3.url)).code).toBe(0);
    });
    await phase('placements set --move of 3 entities', async () => {
      for (const entityId of ENTITIES.slice(0, 3)) {
        const before = await homeOf(n1, entityId);
        const target = nodes.find((node) => node.address !== before.node)!;
        const set = await cli('placements', 'set', String(before.shardId), target.address, '--move', '--url', n2.url);
        expect(set.code, [...set.out, ...set.err].join('\n')).toBe(0);
        await waitFor(
          `${entityId} on ${target.name}`,
          async () => (await homeOf(n3, entityId)).node === target.address,
        );
      }
    });
    await phase('rebalance of 5 entities', async () => {
      const shards = await Promise.all(ENTITIES.slice(3, 8).map(async (id) => String((await homeOf(n1, id)).shardId)));
      const rebalanced = await cli('rebalance', ...new Set(shards), '--url', n3.url);
      expect(rebalanced.code, [...rebalanced.out, ...rebalanced.err].join('\n')).toBe(0);
      await waitFor('the hand-offs to end', async () => (await n1.shards()).handingOff.length === 0);
    });
    await phase("graceful leave of the oldest node (the coordinator's), and its return", () => restart(0));
    await phase('rolling restart of all three nodes', async () => {
      for (const slot of [0, 1, 2]) await restart(slot);
    });
    const sends = await load.stop();

    const processings = log.read();
    const lines = phases.map((p) => {
      const inPhase = sends.filter((send) => send.sentAt >= p.from && send.sentAt < p.to);
      return describePhase(p, inPhase, tally(inPhase, processings));
    });
    const result = tally(sends, processings);
    console.log(
      `[e2e figures] reliable send, ${SENDS_PER_SECOND}/s to ${ENTITIES.length} entities across graceful moves: ` +
        `${lines.join('; ')}; in all sent ${result.sent}, resolved ${result.resolved}, lost ${result.lost.length}, ` +
        `processed twice ${result.processedTwice}`,
    );
    expect(result.failed).toEqual([]);
    expect(result.lost).toEqual([]);
    expect(result.processedTwice).toBe(0);
    expect(valueBreaks(processings, ENTITIES)).toEqual([]);
    // Every entity did move: it was applied on at least two host processes.
    for (const entityId of ENTITIES) {
      expect(
        new Set(processings.filter((p) => p.entityId === entityId).map((p) => p.pid)).size,
        entityId,
      ).toBeGreaterThan(1);
    }
  }, 180_000);
});
