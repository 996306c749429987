// The clean 2|3 split of five nodes with the coordinator (n1) in the minority: the minority downs itself and
// stops before the majority starts its shards, no entity is answered by two processes at once, the heal
// settles on one member list, and every acknowledged placement is on every surviving node.
import { expect } from 'vitest';
import { shardIdFor } from '../../../src/sharding/core/shard-id.js';
import { sleep, waitFor } from '../harness.js';
import type { Slot } from './netns-cluster.js';
import { doubleAnswers, firstLine, homesBefore } from './observe.js';
import {
  downings,
  expectNoDoubles,
  ENTITIES,
  doublesFigureOf,
  outSlots,
  placementGaps,
  PLACEMENT_SHARDS,
  watchAll,
  Writes,
} from './partition-checks.js';
import { healAndSettle, proc, SHORT_DOWN_MS, type PartitionLab } from './partition-lab.js';

export async function cleanSplit(partitionLab: PartitionLab): Promise<void> {
  const c = await partitionLab.startCluster(5, SHORT_DOWN_MS);
  const net = partitionLab.requireLab();
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
      `; ${doublesFigureOf(doubles, cutAt)}; placements acknowledged ${acked.length}, missing: ${gaps.length === 0 ? 'none' : gaps.join('; ')}` +
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
  expectNoDoubles(doubles, cutAt);
  expect.soft(gaps, 'acknowledged placements missing on surviving nodes').toEqual([]);
  expect(settledAt, 'one member list of 5 after the heal').toBeDefined();
}
