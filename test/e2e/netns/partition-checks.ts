// What the partition cases observe and how they report it: every entity answering, answers from two processes
// at once, who downed whom (from the nodes' logs), which nodes left the cluster, and acknowledged placement
// writes missing on a surviving node.
import { expect } from 'vitest';
import { waitFor } from '../harness.js';
import type { NetnsCluster, Slot } from './netns-cluster.js';
import {
  AnswerWatch,
  doubleAnswers,
  leftMembershipAt,
  logLines,
  missingPlacements,
  writePlacement,
  type Acked,
  type DoubleAnswer,
} from './observe.js';
import { proc } from './partition-lab.js';

export const ENTITIES = Array.from({ length: 40 }, (_, i) => `part-${i}`);
/** Shards no entity above uses, for placement writes that must not move live entities. */
export const PLACEMENT_SHARDS = Array.from({ length: 40 }, (_, i) => 950 + i);

/** Starts watching and waits until every entity has answered once (which also allocates every shard). */
export async function watchAll(c: NetnsCluster): Promise<AnswerWatch> {
  const watch = new AnswerWatch(c, ENTITIES).start();
  await waitFor(
    'every entity answering',
    () => ENTITIES.every((id) => watch.answers.some((a) => a.entityId === id && a.host !== undefined)),
    30_000,
  );
  return watch;
}

export function longestDouble(doubles: readonly DoubleAnswer[]): number {
  return doubles.reduce((max, d) => Math.max(max, d.overlapMs), 0);
}

export function describeDoubles(doubles: readonly DoubleAnswer[], t0: number): string {
  if (doubles.length === 0) return 'none';
  return doubles
    .slice(0, 5)
    .map((d) => `${d.entityId} by ${d.hosts.join(' and ')} for ${d.overlapMs} ms (+${d.from - t0}..+${d.to - t0} ms)`)
    .join('; ');
}

/** Who downed whom, from every process's log since `since`. */
export function downings(c: NetnsCluster, since: number): string[] {
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
export function outSlots(c: NetnsCluster, since: number): Array<{ readonly slot: Slot; readonly at: number }> {
  return c.slots.flatMap((slot) => {
    const generation = slot.generations[slot.generations.length - 1]!;
    if (generation.startedAt > since) return [];
    const at = leftMembershipAt(generation.proc, since, generation.exitedAt);
    return at === undefined ? [] : [{ slot, at }];
  });
}

/** Acknowledged placements missing on a surviving node, as readable lines (waiting up to `waitMs` for them). */
export async function placementGaps(
  acked: readonly Acked[],
  survivors: readonly Slot[],
  waitMs = 10_000,
): Promise<string[]> {
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
export class Writes {
  readonly acked: Acked[] = [];

  /** `cursor`: the first of PLACEMENT_SHARDS to use, so that two instances write different shards. */
  constructor(private cursor = 0) {}

  async write(via: Slot, target: Slot): Promise<void> {
    const shardId = PLACEMENT_SHARDS[this.cursor++ % PLACEMENT_SHARDS.length]!;
    const row = await writePlacement(proc(via), shardId, target.address);
    if (row) this.acked.push(row);
  }
}

/**
 * Ends a case's observation: stops the watch, and returns the double answers it saw (and their figure, times
 * from `t0`) and the acknowledged placements missing on the nodes that are still members (all but `out`).
 */
export async function closeWatch(
  c: NetnsCluster,
  watch: AnswerWatch,
  writes: Writes,
  out: ReadonlyArray<{ readonly slot: Slot }>,
  t0: number,
): Promise<{ doubles: DoubleAnswer[]; doublesFigure: string; gaps: string[] }> {
  await watch.stop();
  const doubles = doubleAnswers(watch.answers);
  const doublesFigure = doublesFigureOf(doubles, t0);
  const gaps = await placementGaps(
    writes.acked,
    c.slots.filter((slot) => !out.some((o) => o.slot === slot)),
  );
  return { doubles, doublesFigure, gaps };
}

/** The figure of a case's double answers: the longest, and the first few with their times from `t0`. */
export function doublesFigureOf(doubles: readonly DoubleAnswer[], t0: number): string {
  return `longest double answer ${longestDouble(doubles)} ms (${describeDoubles(doubles, t0)})`;
}

/** Defect "a new coordinator skips the down-removal margin": no entity answered by two processes at once. */
export function expectNoDoubles(doubles: readonly DoubleAnswer[], t0: number): void {
  expect.soft(describeDoubles(doubles, t0), 'entities answered by two nodes at once').toBe('none');
}
