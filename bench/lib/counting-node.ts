// A CLI node process that also counts what it sends, by message type: the real `node` command (src/cli/main.ts)
// with TcpTransport.send wrapped before it starts. The node's /metrics has no per-type transport counters, so
// the 25-process scenario reads heartbeats and gossip per node per second from here. The counts (cumulative,
// since the start) are written to the file named by BENCH_TRAFFIC_FILE every 500 ms, as JSON: { at, byType },
// replaced whole (written aside, then renamed).
import { renameSync, writeFileSync } from 'node:fs';
import { TcpTransport } from '../../src/cluster/transport/tcp-transport.js';
import type { WireMessage } from '../../src/cluster/transport/transport.js';
import { main } from '../../src/cli/main.js';

/** What a counting node writes: cumulative messages sent per type, and when (ms since the epoch). */
export interface TrafficCounts {
  readonly at: number;
  readonly byType: Record<string, number>;
}

const file = process.env['BENCH_TRAFFIC_FILE'];
if (file !== undefined) {
  const byType: Record<string, number> = {};
  const send = TcpTransport.prototype.send;
  TcpTransport.prototype.send = function <M extends WireMessage>(
    this: TcpTransport,
    to: Parameters<typeof send>[0],
    message: M,
  ) {
    byType[message.type] = (byType[message.type] ?? 0) + 1;
    send.call(this, to, message);
  };
  // Written aside, then renamed over the file: a reader never sees it half-written (a truncated file made a whole
  // run's steady-state figures n/a).
  const flush = (): void => {
    writeFileSync(`${file}.next`, JSON.stringify({ at: Date.now(), byType } satisfies TrafficCounts));
    renameSync(`${file}.next`, file);
  };
  setInterval(flush, 500).unref();
}

process.exit(await main(process.argv));
