// What the partition tests watch: counter answers polled through every running node (who answered for which
// entity, and when), acknowledged placement writes, and the nodes' own pino logs (one machine clock, so log
// `time`s and the test's Date.now() compare directly).
import { compareHlc } from '../../../crdt/hlc.js';
import { SHARDS_PATH, sleep, type NodeProc, type PlacementRow, type Proc } from '../harness.js';
import type { NetnsCluster } from './netns-cluster.js';

export interface Answer {
  readonly entityId: string;
  readonly via: string;
  readonly sentAt: number;
  readonly doneAt: number;
  readonly status: number;
  /** Generation key (address#n) of the process that answered, when the answer was a 200. */
  readonly host?: string;
}

/** Client deadline of one poll: short, so a poll lost across a cut frees its slot soon. */
const POLL_TIMEOUT_MS = 2_000;

/**
 * Polls every entity once per round, each round through a different running node (entity i via node
 * (i + round) mod n), so each node's own routing is exercised for every entity. A (entity, node) pair whose
 * previous poll is still in flight is skipped, so a cut link does not pile up requests.
 */
export class AnswerWatch {
  readonly answers: Answer[] = [];
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly inFlight = new Set<string>();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly cluster: NetnsCluster,
    private readonly entities: readonly string[],
    private readonly intervalMs = 250,
  ) {}

  start(): this {
    this.running = true;
    this.loop = this.run();
    return this;
  }

  async stop(): Promise<Answer[]> {
    this.running = false;
    await this.loop;
    await Promise.all([...this.pending]);
    return this.answers;
  }

  private async run(): Promise<void> {
    for (let round = 0; this.running; round++) {
      const nodes = this.cluster.running.map((slot) => slot.generations[slot.generations.length - 1]!.proc);
      if (nodes.length > 0) {
        this.entities.forEach((entityId, i) => {
          const via = nodes[(i + round) % nodes.length]!;
          const key = `${entityId}|${via.name}`;
          if (this.inFlight.has(key)) return;
          this.inFlight.add(key);
          const sentAt = Date.now();
          const done = via.counter(entityId, POLL_TIMEOUT_MS).then((result) => {
            const doneAt = Date.now();
            this.inFlight.delete(key);
            const host = result.status === 200 ? this.cluster.generationAt(result.body.node, doneAt) : undefined;
            this.answers.push({
              entityId,
              via: via.name,
              sentAt,
              doneAt,
              status: result.status,
              ...(host ? { host } : {}),
            });
          });
          this.pending.add(done);
          void done.finally(() => this.pending.delete(done));
        });
      }
      await sleep(this.intervalMs);
    }
  }
}

export interface DoubleAnswer {
  readonly entityId: string;
  readonly hosts: readonly [string, string];
  /** Length of the stretch in which both processes certainly hosted the entity. */
  readonly overlapMs: number;
  readonly from: number;
  readonly to: number;
}

/**
 * Stretches in which two processes answered for one entity at once. An answer proves its host ran the entity
 * at some moment between sending and receiving; with one continuous stint per process (no shard moves back to
 * a process it left within the window), a host certainly ran the entity from its first answer's arrival to
 * its last answer's sending. Two such stretches that intersect mean two hosts at the same moment.
 */
export function doubleAnswers(answers: readonly Answer[]): DoubleAnswer[] {
  const stints = new Map<string, Map<string, { start: number; end: number }>>();
  for (const answer of answers) {
    if (answer.host === undefined) continue;
    const perHost = stints.get(answer.entityId) ?? new Map<string, { start: number; end: number }>();
    stints.set(answer.entityId, perHost);
    const stint = perHost.get(answer.host);
    if (!stint) perHost.set(answer.host, { start: answer.doneAt, end: answer.sentAt });
    else {
      stint.start = Math.min(stint.start, answer.doneAt);
      stint.end = Math.max(stint.end, answer.sentAt);
    }
  }
  const found: DoubleAnswer[] = [];
  for (const [entityId, perHost] of stints) {
    const hosts = [...perHost.entries()];
    for (let i = 0; i < hosts.length; i++) {
      for (let j = i + 1; j < hosts.length; j++) {
        const [a, sa] = hosts[i]!;
        const [b, sb] = hosts[j]!;
        const from = Math.max(sa.start, sb.start);
        const to = Math.min(sa.end, sb.end);
        if (from <= to) found.push({ entityId, hosts: [a, b], overlapMs: to - from, from, to });
      }
    }
  }
  return found.sort((x, y) => y.overlapMs - x.overlapMs);
}

/** entityId -> the host that answered last before `before` (its home then). */
export function homesBefore(answers: readonly Answer[], before: number): Map<string, string> {
  const homes = new Map<string, { at: number; host: string }>();
  for (const answer of answers) {
    if (answer.host === undefined || answer.doneAt > before) continue;
    const known = homes.get(answer.entityId);
    if (!known || known.at < answer.doneAt) homes.set(answer.entityId, { at: answer.doneAt, host: answer.host });
  }
  return new Map([...homes].map(([entityId, { host }]) => [entityId, host]));
}

/** The first answer after `after` for each entity from a host of `hosts` (e.g. the majority taking over). */
export function firstAnswerFrom(
  answers: readonly Answer[],
  hosts: (host: string) => boolean,
  after: number,
): Map<string, number> {
  const first = new Map<string, number>();
  for (const answer of answers) {
    if (answer.host === undefined || answer.sentAt < after || !hosts(answer.host)) continue;
    const known = first.get(answer.entityId);
    if (known === undefined || answer.doneAt < known) first.set(answer.entityId, answer.doneAt);
  }
  return first;
}

// ---------------------------------------------------------------------------------------------- logs

export interface LogLine {
  readonly time: number;
  readonly msg: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

export function logLines(proc: Proc): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of proc.log().split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (typeof entry['time'] === 'number' && typeof entry['msg'] === 'string') {
        lines.push({ time: entry['time'], msg: entry['msg'], fields: entry });
      }
    } catch {
      // Not a pino line.
    }
  }
  return lines;
}

/** The earliest line at or after `after` whose msg contains `text` and that passes `where`. */
export function firstLine(
  procs: readonly Proc[],
  text: string,
  after: number,
  where: (line: LogLine) => boolean = () => true,
): LogLine | undefined {
  let first: LogLine | undefined;
  for (const proc of procs) {
    for (const line of logLines(proc)) {
      if (line.time < after || !line.msg.includes(text) || !where(line)) continue;
      if (!first || line.time < first.time) first = line;
    }
  }
  return first;
}

/** Messages with which a node says it is no longer a member (downed, or removed without seeing 'down'). */
const LEFT_MEMBERSHIP = [
  'this node is down: stopping',
  'this node was removed from the cluster',
  'this node was downed; stopping',
];

/** When the process stopped being a cluster member, by its log or its exit: undefined while it still is. */
export function leftMembershipAt(proc: Proc, since: number, exitedAt?: number): number | undefined {
  const line = firstLine([proc], '', since, (l) => LEFT_MEMBERSHIP.includes(l.msg));
  return line?.time ?? (proc.hasExited ? (exitedAt ?? Date.now()) : undefined);
}

// ---------------------------------------------------------------------------------------------- placements

export interface Acked {
  readonly via: string;
  readonly row: PlacementRow;
}

/**
 * Writes one placement through `via`; resolves with the acknowledged row on a 202 and undefined for anything
 * else (a refused or unanswered write was never acknowledged, so nothing is owed for it).
 */
export async function writePlacement(via: NodeProc, shardId: number, target: string): Promise<Acked | undefined> {
  const result = await via.post<{ placements: PlacementRow[] }>(`${SHARDS_PATH}/placements`, { shardId, target }, 3000);
  if (result.status !== 202) return undefined;
  const row = result.body.placements.find((r) => r.shardId === shardId);
  return row ? { via: via.name, row } : undefined;
}

/** The acknowledged writes missing from `rows`: neither that write nor a later one for its shard is there. */
export function missingPlacements(acked: readonly Acked[], rows: readonly PlacementRow[]): Acked[] {
  return acked.filter((a) => {
    const row = rows.find((r) => r.shardId === a.row.shardId);
    return row === undefined || compareHlc(row.hlc, a.row.hlc) < 0;
  });
}
