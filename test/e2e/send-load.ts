// Load for the issue 23 tests: reliable increments (`POST /counters/:id/increment?reliable=true`, EntityRef.send)
// at a fixed rate, each tagged (header x-e2e-tag, see hooks/record-processing.mjs) so the test can tell which
// ones an entity applied, and each call's outcome recorded. The node it goes through is chosen per send.
import { http } from '../support/http.js';
import { waitForCluster, type NodeProc, type NodeStartOptions, type ProcessSet } from './harness.js';
import type { SendRecord } from './processing-log.js';

/** Above the node's 20 s send deadline, so a send that gives up shows as the node's answer, not ours. */
const CLIENT_TIMEOUT_MS = 30_000;

export class SendLoad {
  readonly sends: SendRecord[] = [];
  private readonly pending = new Map<Promise<void>, SendRecord>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly entities: readonly string[],
    /** The node the next send goes through. */
    private readonly through: () => NodeProc,
    private readonly perSecond: number,
    private readonly tagPrefix: string,
  ) {}

  start(): this {
    this.timer = setInterval(() => this.fire(), 1000 / this.perSecond);
    return this;
  }

  /** Sends answered `processed` so far. */
  get resolved(): number {
    return this.sends.filter((send) => send.status === 200).length;
  }

  /** Waits until no send through `node` is outstanding (before that node is stopped). */
  async settledThrough(node: NodeProc): Promise<void> {
    await Promise.all([...this.pending].filter(([, send]) => send.via === node.name).map(([done]) => done));
  }

  /** Stops sending and waits for every outstanding call to end. */
  async stop(): Promise<SendRecord[]> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([...this.pending.keys()]);
    return this.sends;
  }

  private fire(): void {
    const entityId = this.entities[this.sends.length % this.entities.length]!;
    const via = this.through();
    const send: SendRecord = {
      tag: `${this.tagPrefix}-${this.sends.length}`,
      entityId,
      via: via.name,
      sentAt: Date.now(),
    };
    this.sends.push(send);
    const done = http<{ error?: string; message?: string }>(
      'POST',
      `${via.url}/counters/${encodeURIComponent(entityId)}/increment?reliable=true`,
      undefined,
      CLIENT_TIMEOUT_MS,
      { 'x-e2e-tag': send.tag },
    ).then((result) => {
      send.doneAt = Date.now();
      send.status = result.status;
      if (result.status !== 200) send.error = `${result.body.error}: ${result.body.message}`;
    });
    this.pending.set(done, send);
    void done.finally(() => this.pending.delete(done));
  }
}

/**
 * The node each send goes through: `nodes` in turn, skipping any not in `serving` (one about to stop, one not yet
 * joined). Reads `nodes` at each call, so a slot replaced by a restarted node is used from then on.
 */
export function servingInTurn(nodes: readonly NodeProc[], serving: ReadonlySet<NodeProc>): () => NodeProc {
  let turn = 0;
  return () => {
    const candidates = nodes.filter((node) => serving.has(node));
    return candidates[turn++ % candidates.length]!;
  };
}

/**
 * A rolling-restart step under load: nodes[slot] stops serving, its sends settle, SIGTERM (a graceful leave, which
 * must exit 0), then `next` starts on its ports, seeded by another node, and serves once the cluster has it. No wait
 * for hand-offs to settle: the next step may begin while moves to the returned node are in flight.
 */
export async function restartUnderLoad(
  procs: ProcessSet,
  nodes: NodeProc[],
  serving: Set<NodeProc>,
  load: SendLoad,
  slot: number,
  next: Omit<NodeStartOptions, 'port' | 'httpPort' | 'seed'>,
): Promise<void> {
  const old = nodes[slot]!;
  serving.delete(old);
  await load.settledThrough(old);
  old.signal('SIGTERM');
  const exit = await old.exited;
  if (exit.code !== 0) throw new Error(`${old.name} exited with ${String(exit.code)} on SIGTERM:\n${old.logTail(10)}`);
  const seed = nodes.find((node) => node !== old)!.address;
  nodes[slot] = procs.startNode({ ...next, port: old.port, httpPort: old.httpPort, seed });
  await waitForCluster(nodes, 45_000);
  serving.add(nodes[slot]!);
}
