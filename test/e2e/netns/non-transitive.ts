// A non-transitive cut (one link cut, everything else connected): the leader downs exactly the higher address
// of the cut link, once, from the gossiped reachability table; no entity is answered by two processes at once.
import { expect } from 'vitest';
import { sleep, waitFor } from '../harness.js';
import { firstLine } from './observe.js';
import { closeWatch, downings, expectNoDoubles, outSlots, watchAll, Writes } from './partition-checks.js';
import { healAndSettle, proc, SHORT_DOWN_MS, type PartitionLab } from './partition-lab.js';

/**
 * Cuts the link between slots `a` and `b` (1-based) of `count` nodes, everything else connected. The leader
 * (the lowest address nobody observes as unreachable) decides once from the merged reachability table, after
 * it was stable for stable-after (= down-after-ms here): it downs the higher address of the cut link.
 */
export async function nonTransitive(
  partitionLab: PartitionLab,
  count: number,
  a: number,
  b: number,
  leader: number,
): Promise<void> {
  const label = `non-transitive cut n${a}-n${b} of ${count} nodes`;
  const c = await partitionLab.startCluster(count, SHORT_DOWN_MS);
  const net = partitionLab.requireLab();
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
  const { doubles, doublesFigure, gaps } = await closeWatch(c, watch, writes, out, cutAt);
  const outNames = out.map((o) => o.slot.name);
  console.log(
    `[netns figures] ${label} (down-after-ms ${SHORT_DOWN_MS}): ` +
      `the cluster acted at +${decided ? decided.time - cutAt : '?'} ms; ` +
      `out of the cluster: ${out.map((o) => `${o.slot.name} at +${o.at - cutAt} ms`).join(', ') || 'nobody in 40 s'}` +
      `; still running after leaving: ${stillRunning.join(',') || 'none'}; downings: ${downings(c, cutAt).join('; ')}` +
      `; heal -> one member list in ${settledAt === undefined ? 'never' : `${settledAt - healAt} ms`}` +
      `; ${doublesFigure}` +
      `; placements acknowledged ${writes.acked.length}, missing: ${gaps.join('; ') || 'none'}`,
  );

  expect.soft(gaps, 'acknowledged placements missing on surviving nodes').toEqual([]);
  expect.soft(outNames.length, `the cut downs exactly one node (out: ${outNames.join(',') || 'none'})`).toBe(1);
  expect.soft(outNames, `the higher address of the cut link (${high.name}) is the one downed`).toEqual([high.name]);
  // Defect "two sides both act": one decision, by the one leader, from the merged table.
  expect.soft(decisions, 'downing decisions').toEqual([expect.stringContaining(`n${leader} downs ${high.name}`)]);
  expect.soft(stillRunning, 'nodes no longer members that keep running (and serving HTTP)').toEqual([]);
  expectNoDoubles(doubles, cutAt);
  expect(settledAt, `one member list of ${count} after the heal`).toBeDefined();
}
