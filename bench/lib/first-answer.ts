// The dark window after a host is stopped, as a client sees it: an ask every 100 ms, each on its own (one that went
// to the dead host waits out its ask timeout), until one is answered by another host. Shared by the real-process
// failover benches, with the node shape they keep and the ask that names an entity's host.
import type { ChildProcess } from 'node:child_process';
import { http } from '../../test/support/http.js';

/** One CLI node process a real-process bench runs (its child is replaced when it restarts). */
export interface RealNode {
  readonly port: number;
  readonly httpPort: number;
  readonly address: string;
  readonly url: string;
  child: ChildProcess;
}

/** The node hosting the demo Counter `entityId`, asked through `via` (an increment); undefined on any failure. */
export async function hostOf(via: RealNode, entityId: string): Promise<string | undefined> {
  const result = await http<{ node: string }>(
    'POST',
    `${via.url}/counters/${encodeURIComponent(entityId)}/increment`,
    undefined,
    5_000,
  );
  return result.status === 200 ? result.body.node : undefined;
}

/** Milliseconds from the call until `hostOf()` first names a host other than `victim`; undefined past `limitMs`. */
export async function firstAnswerElsewhere(
  hostOf: () => Promise<string | undefined>,
  victim: string,
  limitMs: number,
): Promise<number | undefined> {
  const start = performance.now();
  let answered: number | undefined;
  const asks: Array<Promise<void>> = [];
  while (answered === undefined && performance.now() - start < limitMs) {
    asks.push(
      hostOf()
        .catch(() => undefined)
        .then((host) => {
          if (host !== undefined && host !== victim)
            answered = Math.min(answered ?? Infinity, performance.now() - start);
        }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await Promise.all(asks);
  return answered;
}
