// A flapping link (cut and restored in turn) with the default downing settings downs nobody: heartbeats must
// resume as soon as the link works again, not after TCP's retransmission backoff.
import { expect } from 'vitest';
import { sleep } from '../harness.js';
import type { NetnsCluster, Slot } from './netns-cluster.js';
import { logLines } from './observe.js';
import { closeWatch, downings, expectNoDoubles, outSlots, watchAll, Writes } from './partition-checks.js';
import { healAndSettle, type PartitionLab } from './partition-lab.js';

/** Flaps the n1-n3 link (cut `downMs`, restored `upMs`) for `totalMs`, then checks nobody was downed. */
export async function flapping(
  partitionLab: PartitionLab,
  label: string,
  downMs: number,
  upMs: number,
  totalMs: number,
): Promise<void> {
  const c = await partitionLab.startCluster(3);
  const net = partitionLab.requireLab();
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
  const { doubles, doublesFigure, gaps } = await closeWatch(c, watch, writes, out, startAt);
  const unreachableMarks = c.slots.flatMap((slot) =>
    logLines(slot.generations[0]!.proc)
      .filter((l) => l.time >= startAt && l.msg === 'marking member unreachable')
      .map(() => slot.name),
  );
  console.log(
    `[netns figures] ${label} (default settings): ${cuts} cuts in ${endAt - startAt} ms; out of the cluster: ${out.map((o) => `${o.slot.name} at +${o.at - startAt} ms`).join(', ') || 'nobody'}` +
      `; downings: ${downings(c, startAt).join('; ') || 'none'}; 'marking member unreachable' lines: ${unreachableMarks.length}` +
      `; one member list ${settledAt === undefined ? 'never' : `${settledAt - endAt} ms after the last restore`}; ${doublesFigure}` +
      `; placements acknowledged ${writes.acked.length}, missing: ${gaps.join('; ') || 'none'}`,
  );
  expect.soft(gaps, 'acknowledged placements missing on surviving nodes').toEqual([]);
  expectNoDoubles(doubles, startAt);
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
