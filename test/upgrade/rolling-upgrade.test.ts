// Issue 35: a rolling upgrade for real. Three CLI nodes of the baseline release (test/upgrade/baseline.json, built
// from this repository's history) are replaced one at a time by this build (SIGTERM, then this build on the same
// ports and data directory) while reliable increments go to 20 counters through every serving node, and a pin is
// written through a node of the old release mid-upgrade. Then one node is rolled back to the baseline and must
// rejoin and serve, and a node whose protocol range meets nobody's is refused with the reason logged.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HTTP_MAX_CONNECTIONS, SENDS_PER_SECOND } from '../e2e/crash-scenario.js';
import { BIN, ROOT, SHARDS_PATH, freePorts, httpOk, useProcessSet, waitFor, type NodeProc } from '../e2e/harness.js';
import { ProcessingLog, tally, valueBreaks, type SendRecord } from '../e2e/processing-log.js';
import { SendLoad, restartUnderLoad, servingInTurn } from '../e2e/send-load.js';
import { inBatches } from '../e2e/traffic.js';
import { sleep } from '../support/poll.js';
import { prepareBaseline, type BuiltBaseline } from './baseline.js';

const ENTITIES = Array.from({ length: 20 }, (_, i) => `upgrading-${i}`);
/** Building the baseline the first time on a machine: extract, link or install, tsc. */
const BUILD_TIMEOUT_MS = 400_000;

const procs = useProcessSet();
let baseline: BuiltBaseline;

beforeAll(() => {
  baseline = prepareBaseline();
}, BUILD_TIMEOUT_MS);

interface Step {
  readonly name: string;
  readonly from: number;
  readonly to: number;
}

/** The longest any send of `sends` waited for its answer: the gap a client saw. */
function longestWait(sends: readonly SendRecord[]): number {
  return Math.max(0, ...sends.map((send) => (send.doneAt ?? Infinity) - send.sentAt));
}

async function metric(node: NodeProc, name: string): Promise<number> {
  const text = await (await fetch(`${node.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

describe(`rolling upgrade from the baseline release (issue 35)`, () => {
  it('old to new one node at a time under reliable sends, a pin written through an old node, a rollback, a refused range', async () => {
    const log = new ProcessingLog(procs.logDir);
    const dataDirOf = (slot: number): string => join(procs.logDir, `data-${slot}`);
    const common = {
      downAfterMs: 3000,
      rebalanceIntervalMs: 4_000,
      httpMaxConnections: HTTP_MAX_CONNECTIONS,
      nodeArgs: log.nodeArgs,
    };
    // Each release's nodes run with its version as their app version (what the CLI defaults to from 0.3 on; 0.2.0
    // defaulted to 1.0.0, so an operator of 0.2.0 nodes set it, as Pekko's app-version is set per deployment).
    const release = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
    const appVersionOf = (bin: string): string => (bin === baseline.bin ? baseline.version : release);
    const nodes = await procs.startCluster(3, {
      ...common,
      bin: baseline.bin,
      appVersion: baseline.version,
      dataDirOf,
    });
    await inBatches(ENTITIES, 10, (entityId) => nodes[0]!.increment(entityId));

    const serving = new Set<NodeProc>(nodes);
    const through = servingInTurn(nodes, serving);
    const load = new SendLoad(ENTITIES, through, SENDS_PER_SECOND, 'upgrade').start();
    const steps: Step[] = [];

    /** SIGTERM of nodes[slot] (a graceful leave), then `bin` on its ports and data directory. */
    const replace = async (slot: number, bin: string, label: string): Promise<void> => {
      const from = Date.now();
      const old = nodes[slot]!;
      await restartUnderLoad(procs, nodes, serving, load, slot, {
        ...common,
        name: `${old.name}-${label}`,
        bin,
        appVersion: appVersionOf(bin),
        dataDir: dataDirOf(slot),
      });
      await sleep(1_000);
      steps.push({ name: `node ${slot + 1} to ${label}`, from, to: Date.now() });
    };

    await waitFor('the first sends processed', () => load.resolved >= SENDS_PER_SECOND, 15_000, 50);
    await replace(0, BIN, 'new');
    // Mid-upgrade, a pin written through a node of the old release.
    const pinned = (await nodes[0]!.counter(ENTITIES[0]!)).body.shardId;
    const pin = await nodes[1]!.post<{ error?: string }>(`${SHARDS_PATH}/placements`, {
      shardId: pinned,
      target: nodes[0]!.address,
    });
    expect(pin.status, JSON.stringify(pin.body)).toBe(202);
    // While releases are mixed, shards leaving an old node go to the newest release (a CLI node's app version is
    // its release), and the fallback does not rebalance them back: the upgrade moves them forward once.
    const homes = async (): Promise<string[]> =>
      Promise.all(ENTITIES.map(async (id) => (await nodes[0]!.counter(id)).body.node));
    const leaving = nodes[1]!.address;
    const onLeaving = (await homes()).flatMap((home, i) => (home === leaving ? [ENTITIES[i]!] : []));
    expect(onLeaving.length, 'entities hosted on the node replaced second').toBeGreaterThan(0);
    await replace(1, BIN, 'new');
    const movedTo = await homes();
    for (const entityId of onLeaving)
      expect(movedTo[ENTITIES.indexOf(entityId)], `${entityId} left ${leaving}`).toBe(nodes[0]!.address);
    await replace(2, BIN, 'new');
    await replace(2, baseline.bin, 'rolled-back');
    const sends = await load.stop();

    const processings = log.read();
    const result = tally(sends, processings);
    const perStep = steps.map((step) => {
      const inStep = sends.filter((send) => send.sentAt >= step.from && send.sentAt < step.to);
      return `${step.name}: longest wait ${longestWait(inStep)} ms`;
    });
    console.log(
      `[upgrade figures] baseline ${baseline.version} (${baseline.commit.slice(0, 12)}) to this build: ` +
        `sent ${result.sent}, acknowledged ${result.resolved}, lost ${result.lost.length}, ` +
        `applied twice ${result.processedTwice}; ${perStep.join('; ')}`,
    );
    expect(result.failed).toEqual([]);
    expect(result.lost).toEqual([]);
    expect(result.processedTwice).toBe(0);
    expect(valueBreaks(processings, ENTITIES)).toEqual([]);

    // The pin is listed by every node, the rolled-back one included, and the rolled-back node serves.
    for (const node of nodes) {
      await waitFor(`${node.name} to list the pin of shard ${pinned}`, async () =>
        (await node.placements()).some((row) => row.shardId === pinned && row.target === nodes[0]!.address),
      );
    }
    const served = await nodes[2]!.increment(ENTITIES[1]!);
    expect(served.status, JSON.stringify(served.body)).toBe(200);

    // A node whose protocol range meets nobody's is refused, and says why.
    const [port, httpPort] = await freePorts(2);
    const stranger = procs.startNode({
      ...common,
      name: 'stranger',
      port: port!,
      httpPort: httpPort!,
      seed: nodes[0]!.address,
      env: { ACTOR_TS_PROTOCOL_RANGE: '200-201' },
    });
    await waitFor(
      'the stranger to log its refusal',
      () => /protocol/i.test(stranger.log()) && /200/.test(stranger.log()),
    );
    await waitFor(
      'the refusal counted on the seed',
      async () => (await metric(nodes[0]!, 'actor_ts_transport_refused_total{reason="protocol_version"')) > 0,
    );
    // The seed stays a member but says why it is not ok; the stranger, which never joined, says the same.
    type Health = { status: string; reasons: string[] };
    const seedHealth = await httpOk<Health>('GET', `${nodes[0]!.url}/actor-ts/health`);
    expect(seedHealth.status).toBe('degraded');
    expect(seedHealth.reasons.join('\n')).toContain(`${stranger.address} speaks [200, 201]`);
    const strangerHealth = await httpOk<Health>('GET', `${stranger.url}/actor-ts/health`);
    expect(strangerHealth.reasons.join('\n')).toMatch(/protocol_version/);
    expect((await nodes[0]!.get<{ members: unknown[] }>('/actor-ts/cluster/members')).body.members).toHaveLength(3);
  }, 300_000);
});
