// Load for the issue 23 tests: reliable increments (`POST /counters/:id/increment?reliable=true`, EntityRef.send)
// at a fixed rate, each tagged (header x-e2e-tag, see hooks/record-processing.mjs) so the test can tell which
// ones an entity applied, and each call's outcome recorded. The node it goes through is chosen per send.
import { http } from '../support/http.js';
import type { NodeProc } from './harness.js';
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
