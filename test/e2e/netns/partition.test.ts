// Real partitions between CLI node processes, each in its own Linux network namespace on a private bridge;
// links are cut with nft drop rules. Cases: a clean 2|3 split of five nodes, a non-transitive cut of three
// (n1-n3) and of five (n2-n4) nodes (the leader downs the higher address of the cut link, once, from the
// gossiped reachability table), and a flapping link (2 s / 2 s, and 7 s cut / 3 s up) with the default
// downing settings. Each case polls every entity through every node and checks that no
// two processes answer for one entity at the same time, that the side that must go downs itself, that after
// the heal the cluster settles on one member list, and that every placement acknowledged by a node that stays
// a member is on every surviving node. Figures are printed as [netns figures].
// Needs root, `ip` and `nft` (CI runs as root; .ci/run installs nftables); without them every case fails
// saying why.
import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { shardIdFor } from '../../../src/sharding/shard-id.js';
import { requireBuild, sleep, waitFor, waitForCluster, type NodeProc } from '../harness.js';
import { Lab, namespaceExists, removeStale, whyNoLab } from './lab.js';
import { NetnsCluster, type Slot } from './netns-cluster.js';
import {
  AnswerWatch,
  doubleAnswers,
  firstLine,
  homesBefore,
  leftMembershipAt,
  logLines,
  missingPlacements,
  writePlacement,
  type Acked,
  type DoubleAnswer,
} from './observe.js';

const SHORT_DOWN_MS = 3000;
const ENTITIES = Array.from({ length: 40 }, (_, i) => `part-${i}`);
/** Shards no entity above uses, for placement writes that must not move live entities. */
const PLACEMENT_SHARDS = Array.from({ length: 40 }, (_, i) => 950 + i);

let lab: Lab | undefined;
let labError: string | undefined;
let cluster: NetnsCluster | undefined;
let keepLogs = false;
const logDirs: string[] = [];

beforeAll(() => {
  requireBuild();
  labError = whyNoLab();
  if (labError !== undefined) return;
  const stale = removeStale();
  if (stale.length > 0) console.log(`removed stale namespaces/bridges of an earlier run: ${stale.join(', ')}`);
  try {
    lab = new Lab(5);
  } catch (error) {
    labError = `building the namespaces failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}, 60_000);

afterEach(async (context) => {
  if (context.task.result?.state === 'fail') {
    keepLogs = true;
    if (cluster) console.log(cluster.describe());
  }
  await cluster?.killAll();
  if (cluster) logDirs.push(cluster.logDir);
  cluster = undefined;
  lab?.healAll();
}, 30_000);

// A run that dies between beforeAll and afterAll (an uncaught error, a worker exit) still removes the lab;
// one killed outright leaves it to the next run's removeStale.
process.once('exit', () => lab?.destroy());

afterAll(async () => {
  await cluster?.killAll();
  const names = lab?.nodes.map((node) => node.ns) ?? [];
  lab?.destroy();
  for (const dir of logDirs) {
    if (keepLogs || process.env['E2E_KEEP_LOGS'] !== undefined) console.log(`netns e2e logs kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  const left = names.filter(namespaceExists);
  if (left.length > 0) throw new Error(`namespaces left behind: ${left.join(', ')}`);
}, 60_000);

/** The lab, or a failure that says why this machine cannot run the case (never a skip). */
function requireLab(): Lab {
  if (lab === undefined)
    throw new Error(`the network-namespace partition tests cannot run on this machine: ${labError ?? 'no lab'}`);
  return lab;
}

async function startCluster(count: number, downAfterMs?: number): Promise<NetnsCluster> {
  cluster = new NetnsCluster(requireLab(), count, downAfterMs !== undefined ? { downAfterMs } : {});
  await cluster.start();
  return cluster;
}

function proc(slot: Slot): NodeProc {
  return slot.generations[slot.generations.length - 1]!.proc;
}

/** Starts watching and waits until every entity has answered once (which also allocates every shard). */
async function watchAll(c: NetnsCluster): Promise<AnswerWatch> {
  const watch = new AnswerWatch(c, ENTITIES).start();
  await waitFor(
    'every entity answering',
    () => ENTITIES.every((id) => watch.answers.some((a) => a.entityId === id && a.host !== undefined)),
    30_000,
  );
  return watch;
}

function longestDouble(doubles: readonly DoubleAnswer[]): number {
  return doubles.reduce((max, d) => Math.max(max, d.overlapMs), 0);
}

function describeDoubles(doubles: readonly DoubleAnswer[], t0: number): string {
  if (doubles.length === 0) return 'none';
  return doubles
    .slice(0, 5)
    .map((d) => `${d.entityId} by ${d.hosts.join(' and ')} for ${d.overlapMs} ms (+${d.from - t0}..+${d.to - t0} ms)`)
    .join('; ');
}

/** Who downed whom, from every process's log since `since`. */
function downings(c: NetnsCluster, since: number): string[] {
  const events: Array<{ time: number; text: string }> = [];
  for (const slot of c.slots) {
    for (const generation of slot.generations) {
      for (const line of logLines(generation.proc)) {
        if (line.time < since) continue;
        if (line.msg.startsWith('downing unreachable members')) {
          const members = (line.fields['members'] as string[] | undefined) ?? [];
          events.push({
            time: line.time,
            text: `${slot.name} downs ${members.map((m) => c.slotOf(m.split('#')[0] ?? m)?.name ?? m).join(',')}`,
          });
        } else if (line.msg.includes('downing itself')) {
          events.push({ time: line.time, text: `${slot.name} downs itself (minority side)` });
        } else if (line.msg === 'this node was downed; stopping') {
          events.push({ time: line.time, text: `${slot.name} stops (cause ${String(line.fields['cause'])})` });
        }
      }
    }
  }
  return events.sort((a, b) => a.time - b.time).map((e) => `+${e.time - since} ms ${e.text}`);
}

/** Slots whose newest process stopped being a member (says so in its log, or exited) since `since`. */
function outSlots(c: NetnsCluster, since: number): Array<{ readonly slot: Slot; readonly at: number }> {
  return c.slots.flatMap((slot) => {
    const generation = slot.generations[slot.generations.length - 1]!;
    if (generation.startedAt > since) return [];
    const at = leftMembershipAt(generation.proc, since, generation.exitedAt);
    return at === undefined ? [] : [{ slot, at }];
  });
}

/** Waits until every running node sees the same member list of exactly the running nodes, all up and reachable. */
async function settle(c: NetnsCluster, timeoutMs: number): Promise<void> {
  await waitForCluster(c.running.map(proc), timeoutMs);
}

/**
 * Heals every link, starts the nodes that are out again on their addresses, and waits until the cluster settles
 * on one member list. Returns when it settled, or undefined (recorded as a soft failure saying `what`).
 */
async function healAndSettle(
  net: Lab,
  c: NetnsCluster,
  out: readonly Slot[],
  timeoutMs: number,
  what: string,
): Promise<number | undefined> {
  net.healAll();
  await c.replace(out);
  try {
    await settle(c, timeoutMs);
    return Date.now();
  } catch (error) {
    expect.soft(String(error), what).toBe('settled');
    return undefined;
  }
}

/** Acknowledged placements missing on a surviving node, as readable lines (waiting up to `waitMs` for them). */
async function placementGaps(acked: readonly Acked[], survivors: readonly Slot[], waitMs = 10_000): Promise<string[]> {
  const gapsNow = async (): Promise<string[]> => {
    const gaps: string[] = [];
    for (const slot of survivors) {
      for (const m of missingPlacements(acked, await proc(slot).placements())) {
        gaps.push(`${slot.name} lacks shard ${m.row.shardId} -> ${m.row.target} acknowledged by ${m.via}`);
      }
    }
    return gaps;
  };
  // Replication is asynchronous: give anti-entropy a moment after the heal before calling a write lost.
  if (waitMs === 0) return gapsNow();
  return waitFor(
    'acknowledged placements on every survivor',
    async () => ((await gapsNow()).length === 0 ? [] : false),
    waitMs,
    250,
  ).catch(gapsNow);
}

/** Placement writes on unused shards, one shard per write, keeping the acknowledged ones. */
class Writes {
  readonly acked: Acked[] = [];

  /** `cursor`: the first of PLACEMENT_SHARDS to use, so that two instances write different shards. */
  constructor(private cursor = 0) {}

  async write(via: Slot, target: Slot): Promise<void> {
    const shardId = PLACEMENT_SHARDS[this.cursor++ % PLACEMENT_SHARDS.length]!;
    const row = await writePlacement(proc(via), shardId, target.address);
    if (row) this.acked.push(row);
  }
}

describe('partitions between network namespaces', () => {
  it('clean 2|3 split of five nodes (the coordinator n1 in the minority): the minority downs itself and stops before the majority starts its shards; no entity answered twice; heal settles; acknowledged placements everywhere', async () => {
    const c = await startCluster(5, SHORT_DOWN_MS);
    const net = requireLab();
    const watch = await watchAll(c);
    // The minority holds n1, the oldest node and so the coordinator: the majority's new coordinator (n3)
    // takes over the minority's shards, which is where the down-removal margin matters.
    const minority = c.slots.slice(0, 2);
    const majority = c.slots.slice(2);
    const isMinorityHost = (host: string): boolean => minority.some((slot) => host.startsWith(`${slot.address}#`));

    const writes = new Writes();
    const write = (via: Slot, target: Slot): Promise<void> => writes.write(via, target);
    await write(c.slots[0]!, c.slots[1]!);
    await write(c.slots[4]!, c.slots[3]!);

    const homes = homesBefore(watch.answers, Date.now());
    const minorityEntities = ENTITIES.filter((id) => isMinorityHost(homes.get(id) ?? ''));
    expect(minorityEntities.length, 'entities hosted by the minority before the cut').toBeGreaterThan(0);
    const minorityShards = new Set(minorityEntities.map((id) => shardIdFor(id, 1000)));

    const cutAt = Date.now();
    net.partition(
      majority.map((s) => s.lab),
      minority.map((s) => s.lab),
    );
    // Writes on both sides while the partition lasts. The minority may acknowledge one before it goes down:
    // 202 means applied on that node and replicated asynchronously, and a node cut off from everyone that
    // then downs itself (and exits: nothing is persisted) cannot hand it on. Those are reported, not required.
    const minorityWrites = new Writes(PLACEMENT_SHARDS.length / 2);
    await Promise.all([write(c.slots[2]!, c.slots[3]!), minorityWrites.write(c.slots[1]!, c.slots[1]!)]);

    const exits = await Promise.all(
      minority.map((slot) =>
        Promise.race([proc(slot).exited, sleep(30_000).then(() => undefined)]).then((exit) => ({
          slot,
          exit,
          at: Date.now(),
        })),
      ),
    );
    const rehomed = await waitFor(
      "the minority's entities answering from the majority",
      () => {
        const taken = new Map<string, number>();
        for (const a of watch.answers) {
          if (
            a.sentAt >= cutAt &&
            a.host !== undefined &&
            !isMinorityHost(a.host) &&
            minorityEntities.includes(a.entityId) &&
            !taken.has(a.entityId)
          ) {
            taken.set(a.entityId, a.doneAt);
          }
        }
        return taken.size === minorityEntities.length ? taken : undefined;
      },
      40_000,
      200,
    ).catch(() => undefined);
    await write(c.slots[3]!, c.slots[2]!);

    const healAt = Date.now();
    const settledAt = await healAndSettle(
      net,
      c,
      outSlots(c, cutAt).map((o) => o.slot),
      40_000,
      'after the heal the cluster settles on one member list',
    );
    await sleep(1000);
    await watch.stop();

    // Timing from the nodes' logs (one clock): when the minority stopped, when the majority started its shards.
    const minorityStops = minority.map((slot) => {
      const first = slot.generations[0]!.proc;
      const stopped = firstLine([first], 'sharding stopped', cutAt)?.time ?? slot.generations[0]!.exitedAt;
      const downed = firstLine([first], 'downing itself', cutAt)?.time;
      return { slot, stopped, downed };
    });
    const majorityStart = firstLine(majority.map(proc), 'shard started', cutAt, (line) =>
      minorityShards.has(Number(line.fields['shardId'])),
    );
    const majorityDowns = firstLine(majority.map(proc), 'downing unreachable members', cutAt);
    const majoritySeesCut = firstLine(majority.map(proc), 'marking member unreachable', cutAt);
    const doubles = doubleAnswers(watch.answers);
    const rehomeTimes = rehomed ? [...rehomed.values()].map((t) => t - cutAt) : [];
    const acked = writes.acked;
    const gaps = await placementGaps(acked, majority);
    const minorityGaps = await placementGaps(minorityWrites.acked, majority, 0);

    console.log(
      `[netns figures] 2|3 split (down-after-ms ${SHORT_DOWN_MS}): ` +
        `majority marks a minority node unreachable at +${majoritySeesCut ? majoritySeesCut.time - cutAt : '?'} ms; ` +
        minorityStops
          .map(
            (m) =>
              `${m.slot.name} downed itself at +${m.downed === undefined ? '?' : m.downed - cutAt} ms, shards stopped at +${m.stopped === undefined ? '?' : m.stopped - cutAt} ms`,
          )
          .join(', ') +
        `; majority downs them at +${majorityDowns ? majorityDowns.time - cutAt : '?'} ms, first majority start of a minority shard at +${majorityStart ? majorityStart.time - cutAt : '?'} ms` +
        `; all ${minorityEntities.length} minority entities answered from the majority by +${rehomeTimes.length > 0 ? Math.max(...rehomeTimes) : '?'} ms` +
        `; heal -> one member list of 5 in ${settledAt === undefined ? 'never' : `${settledAt - healAt} ms`}` +
        `; longest double answer ${longestDouble(doubles)} ms (${describeDoubles(doubles, cutAt)}); placements acknowledged ${acked.length}, missing: ${gaps.length === 0 ? 'none' : gaps.join('; ')}` +
        `; acknowledged by the minority during the cut ${minorityWrites.acked.length}, of them lost: ${minorityGaps.length === 0 ? 'none' : minorityGaps.join('; ')}` +
        `; downings: ${downings(c, cutAt).join('; ')}`,
    );

    for (const { slot, exit } of exits) {
      expect.soft(exit, `${slot.name} (minority) exits after downing itself`).toEqual({ code: 1, signal: null });
      expect
        .soft(firstLine([slot.generations[0]!.proc], 'downing itself', cutAt), `${slot.name} logs that it downs itself`)
        .toBeDefined();
    }
    for (const slot of majority) expect.soft(slot.generations.length, `${slot.name} (majority) kept running`).toBe(1);
    // Defect "the minority does not act first": each minority node downs itself before the majority downs it.
    for (const m of minorityStops) {
      const downedBy = firstLine(majority.map(proc), 'downing unreachable members', cutAt, (line) =>
        ((line.fields['members'] as string[] | undefined) ?? []).some((key) => key.startsWith(`${m.slot.address}#`)),
      );
      if (m.downed !== undefined && downedBy !== undefined) {
        expect
          .soft(
            m.downed,
            `${m.slot.name} downed itself (+${m.downed - cutAt} ms) before the majority downed it (+${downedBy.time - cutAt} ms)`,
          )
          .toBeLessThan(downedBy.time);
      }
    }
    expect.soft(rehomed, 'every minority entity answered from the majority after the cut').toBeDefined();
    // Defect "the minority does not act first": the minority must have stopped before the majority starts.
    for (const m of minorityStops) {
      expect.soft(m.stopped, `${m.slot.name} stopped its shards`).toBeDefined();
      if (m.stopped !== undefined && majorityStart !== undefined) {
        expect
          .soft(
            m.stopped,
            `${m.slot.name} stopped its shards (+${m.stopped - cutAt} ms) before the majority started one (+${majorityStart.time - cutAt} ms)`,
          )
          .toBeLessThan(majorityStart.time);
      }
    }
    // Defect "a new coordinator skips the down-removal margin": no entity answered by two processes at once.
    expect.soft(describeDoubles(doubles, cutAt), 'entities answered by two nodes at once').toBe('none');
    expect.soft(gaps, 'acknowledged placements missing on surviving nodes').toEqual([]);
    expect(settledAt, 'one member list of 5 after the heal').toBeDefined();
  }, 180_000);

  /**
   * Cuts the link between slots `a` and `b` (1-based) of `count` nodes, everything else connected. The leader
   * (the lowest address nobody observes as unreachable) decides once from the merged reachability table, after
   * it was stable for stable-after (= down-after-ms here): it downs the higher address of the cut link.
   */
  async function nonTransitive(count: number, a: number, b: number, leader: number): Promise<void> {
    const label = `non-transitive cut n${a}-n${b} of ${count} nodes`;
    const c = await startCluster(count, SHORT_DOWN_MS);
    const net = requireLab();
    const watch = await watchAll(c);
    const [low, high] = [c.slots[a - 1]!, c.slots[b - 1]!];
    const middle = c.slots.find((slot) => slot !== low && slot !== high)!;

    const writes = new Writes();
    await writes.write(low, middle);
    const cutAt = Date.now();
    net.cut(low.lab, high.lab);
    // Writes at both ends of the cut link while it is cut.
    await Promise.all([writes.write(low, low), writes.write(high, high)]);
    const first = await waitFor(
      'a node to leave the cluster',
      () => {
        const out = outSlots(c, cutAt);
        return out.length > 0 ? out : undefined;
      },
      40_000,
      200,
    ).catch(() => []);
    // A second downing would follow within the down-after margin plus detection; watch that long, not longer.
    if (first.length > 0) await sleep(SHORT_DOWN_MS + 5000);
    const out = outSlots(c, cutAt);
    // A node that is no longer a member must stop serving: give its process a moment to exit.
    await Promise.all(out.map((o) => Promise.race([proc(o.slot).exited, sleep(5000)])));
    const stillRunning = out.filter((o) => !proc(o.slot).hasExited).map((o) => o.slot.name);
    const decided = firstLine(c.slots.map(proc), 'downing unreachable members', cutAt);
    const decisions = downings(c, cutAt).filter((line) => line.includes(' downs '));

    const healAt = Date.now();
    const settledAt = await healAndSettle(
      net,
      c,
      out.map((o) => o.slot),
      40_000,
      'after the heal the cluster settles on one member list',
    );
    await writes.write(middle, middle);
    await watch.stop();
    const doubles = doubleAnswers(watch.answers);
    const outNames = out.map((o) => o.slot.name);
    const gaps = await placementGaps(
      writes.acked,
      c.slots.filter((slot) => !outNames.includes(slot.name)),
    );
    console.log(
      `[netns figures] ${label} (down-after-ms ${SHORT_DOWN_MS}): ` +
        `the cluster acted at +${decided ? decided.time - cutAt : '?'} ms; ` +
        `out of the cluster: ${out.map((o) => `${o.slot.name} at +${o.at - cutAt} ms`).join(', ') || 'nobody in 40 s'}` +
        `; still running after leaving: ${stillRunning.join(',') || 'none'}; downings: ${downings(c, cutAt).join('; ')}` +
        `; heal -> one member list in ${settledAt === undefined ? 'never' : `${settledAt - healAt} ms`}` +
        `; longest double answer ${longestDouble(doubles)} ms (${describeDoubles(doubles, cutAt)})` +
        `; placements acknowledged ${writes.acked.length}, missing: ${gaps.join('; ') || 'none'}`,
    );

    expect.soft(gaps, 'acknowledged placements missing on surviving nodes').toEqual([]);
    expect.soft(outNames.length, `the cut downs exactly one node (out: ${outNames.join(',') || 'none'})`).toBe(1);
    expect.soft(outNames, `the higher address of the cut link (${high.name}) is the one downed`).toEqual([high.name]);
    // Defect "two sides both act": one decision, by the one leader, from the merged table.
    expect.soft(decisions, 'downing decisions').toEqual([expect.stringContaining(`n${leader} downs ${high.name}`)]);
    expect.soft(stillRunning, 'nodes no longer members that keep running (and serving HTTP)').toEqual([]);
    expect.soft(describeDoubles(doubles, cutAt), 'entities answered by two nodes at once').toBe('none');
    expect(settledAt, `one member list of ${count} after the heal`).toBeDefined();
  }

  it('non-transitive cut n1-n3 of three nodes: exactly one node is downed, the higher address of the cut link (n3), by the leader n2 alone; no entity answered twice', async () => {
    await nonTransitive(3, 1, 3, 2);
  }, 150_000);

  it('non-transitive cut n2-n4 of five nodes: exactly n4 is downed, by the leader n1 alone; no entity answered twice', async () => {
    await nonTransitive(5, 2, 4, 1);
  }, 180_000);

  /** Flaps the n1-n3 link (cut `downMs`, restored `upMs`) for `totalMs`, then checks nobody was downed. */
  async function flapping(label: string, downMs: number, upMs: number, totalMs: number): Promise<void> {
    const c = await startCluster(3);
    const net = requireLab();
    const watch = await watchAll(c);
    const [n1, , n3] = c.slots as [Slot, Slot, Slot];
    const writes = new Writes();
    const startAt = Date.now();
    let cuts = 0;
    while (Date.now() - startAt < totalMs && outSlots(c, startAt).length === 0) {
      net.cut(n1.lab, n3.lab);
      cuts++;
      // One write per cut, at alternating ends of the flapping link.
      await writes.write(cuts % 2 === 0 ? n1 : n3, cuts % 2 === 0 ? n1 : n3);
      await sleep(downMs);
      net.restore(n1.lab, n3.lab);
      await sleep(upMs);
    }
    const endAt = Date.now();
    const out = outSlots(c, startAt);
    // After the last restore, heartbeats resume as soon as the connection works again.
    const settledAt = await healAndSettle(
      net,
      c,
      out.map((o) => o.slot),
      30_000,
      'after the flapping the cluster settles on one member list',
    );
    await watch.stop();
    const doubles = doubleAnswers(watch.answers);
    const gaps = await placementGaps(
      writes.acked,
      c.slots.filter((slot) => !out.some((o) => o.slot === slot)),
    );
    const unreachableMarks = c.slots.flatMap((slot) =>
      logLines(slot.generations[0]!.proc)
        .filter((l) => l.time >= startAt && l.msg === 'marking member unreachable')
        .map(() => slot.name),
    );
    console.log(
      `[netns figures] ${label} (default settings): ${cuts} cuts in ${endAt - startAt} ms; out of the cluster: ${out.map((o) => `${o.slot.name} at +${o.at - startAt} ms`).join(', ') || 'nobody'}` +
        `; downings: ${downings(c, startAt).join('; ') || 'none'}; 'marking member unreachable' lines: ${unreachableMarks.length}` +
        `; one member list ${settledAt === undefined ? 'never' : `${settledAt - endAt} ms after the last restore`}; longest double answer ${longestDouble(doubles)} ms (${describeDoubles(doubles, startAt)})` +
        `; placements acknowledged ${writes.acked.length}, missing: ${gaps.join('; ') || 'none'}`,
    );
    expect.soft(gaps, 'acknowledged placements missing on surviving nodes').toEqual([]);
    expect.soft(describeDoubles(doubles, startAt), 'entities answered by two nodes at once').toBe('none');
    // Defect "a link that comes back stays dead for seconds": TCP's retransmission backoff keeps the
    // connection silent past the restore, so the member stays unreachable until down-after runs out.
    expect.soft(downs(c, startAt), 'downing decisions during the flapping').toEqual([]);
    expect(
      out.map((o) => o.slot.name),
      'nodes out of the cluster after a flapping link',
    ).toEqual([]);
  }

  function downs(c: NetnsCluster, since: number): string[] {
    return downings(c, since).filter((line) => line.includes('downs'));
  }

  it('a link flapping every 2 s for 30 s downs nobody (default settings)', async () => {
    await flapping('flapping n1-n3 2 s / 2 s', 2000, 2000, 30_000);
  }, 150_000);

  it('a link cut 7 s and up 3 s, for 30 s, downs nobody (default settings: the link must work again once restored)', async () => {
    await flapping('flapping n1-n3 7 s cut / 3 s up', 7000, 3000, 30_000);
  }, 150_000);
});
