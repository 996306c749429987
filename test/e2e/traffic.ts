// Load and probes for the failover tests: a steady stream of counter increments whose every outcome is
// recorded (so losses in a window can be counted), and a re-homing watcher that notes when each entity of a
// lost node first answers from a survivor.
import { sleep, type CounterValue, type NodeProc } from './harness.js';

export interface AskRecord {
  readonly entityId: string;
  readonly via: string;
  readonly sentAt: number;
  doneAt: number;
  ok: boolean;
  status: number;
  /** The hosting node named in a successful answer. */
  node?: string;
  value?: number;
}

/** Client-side deadline of one ask; above the server's 5 s ask timeout, so a lost message shows as a 504. */
const ASK_CLIENT_TIMEOUT_MS = 12_000;

/**
 * Fires one increment every `intervalMs` (without waiting for earlier ones), cycling over the entities and,
 * out of step with them, over the nodes it sends through.
 */
export class Traffic {
  readonly records: AskRecord[] = [];
  private readonly pending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private sent = 0;

  constructor(
    private readonly entities: readonly string[],
    private readonly through: readonly NodeProc[],
    private readonly intervalMs = 100,
  ) {}

  start(): this {
    this.timer = setInterval(() => this.fire(), this.intervalMs);
    return this;
  }

  /** Stops sending and waits for every outstanding ask to finish or time out. */
  async stop(): Promise<AskRecord[]> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([...this.pending]);
    return this.records;
  }

  private fire(): void {
    const i = this.sent++;
    const entityId = this.entities[i % this.entities.length]!;
    const via = this.through[(i + Math.floor(i / this.entities.length)) % this.through.length]!;
    const record: AskRecord = { entityId, via: via.name, sentAt: Date.now(), doneAt: 0, ok: false, status: 0 };
    this.records.push(record);
    const done = via.increment(entityId, ASK_CLIENT_TIMEOUT_MS).then((result) => {
      record.doneAt = Date.now();
      record.status = result.status;
      record.ok = result.status === 200;
      if (record.ok) {
        record.node = result.body.node;
        record.value = result.body.value;
      }
    });
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
  }
}

/** Client-side deadline of a re-homing probe: short, so a probe lost with the dead node frees its slot soon. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Probes each entity (GET, through the given nodes in turn) every `intervalMs` until each has answered from
 * one of `homes`; probes are not capped by earlier ones still in flight, so the resolution is `intervalMs`
 * even while asks to the lost node hang until their timeout. Resolves with the arrival time of each entity's
 * first such answer; throws after `timeoutMs` naming the entities still missing.
 */
export async function watchRehoming(
  entities: readonly string[],
  through: readonly NodeProc[],
  homes: ReadonlySet<string>,
  timeoutMs: number,
  intervalMs = 250,
): Promise<Map<string, number>> {
  const rehomedAt = new Map<string, number>();
  const pending = new Set<Promise<void>>();
  const deadline = Date.now() + timeoutMs;
  let round = 0;
  while (rehomedAt.size < entities.length && Date.now() < deadline) {
    for (const [i, entityId] of entities.entries()) {
      if (rehomedAt.has(entityId)) continue;
      const via = through[(round + i) % through.length]!;
      const probe = via.counter(entityId, PROBE_TIMEOUT_MS).then((result) => {
        const body = result.body as CounterValue;
        if (result.status === 200 && homes.has(body.node) && !rehomedAt.has(entityId))
          rehomedAt.set(entityId, Date.now());
      });
      pending.add(probe);
      void probe.finally(() => pending.delete(probe));
    }
    round++;
    // Pacing of the probes, not synchronisation: the loop ends on the answers it collects.
    await sleep(intervalMs);
  }
  await Promise.all([...pending]);
  const missing = entities.filter((id) => !rehomedAt.has(id));
  if (missing.length > 0) throw new Error(`not re-homed within ${timeoutMs} ms: ${missing.join(', ')}`);
  return rehomedAt;
}

/** Runs `task` over `items` with at most `limit` in flight. */
export async function inBatches<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
