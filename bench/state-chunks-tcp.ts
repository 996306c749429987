// The transport's large-frame path alone (issue 40): a shard's hand-off state (1,000 entities x 1 KiB, packed into
// ShardStateChunk messages as a region packs them) sent from one TcpTransport to another over loopback TCP in this
// one process, `rounds` times; prints the median ms from the first chunk sent to the last one received, and the
// CPU ms per round (both ends: encode, frame, write, read, reassemble, scan, decode, parse). One process, so no
// other process's scheduling is in it: the figure to compare two builds' transports by, alternated in the same
// minutes. `npm run build && node dist/bench/state-chunks-tcp.js [rounds]`.
import { TcpTransport } from '../src/cluster/transport/tcp-transport.js';
import { MESSAGE_FAMILIES } from '../src/protocol.js';
import { PROTOCOL_VERSION } from '../src/cluster/transport/wire-message.js';
import { stateOnWire } from '../src/sharding/protocol/state-messages.js';
import { StateTransfer } from '../src/sharding/region/state-transfer.js';
import { silentLogger } from '../src/logging.js';
import { summarize } from './lib/stats.js';

const rounds = Number(process.argv[2] ?? 200);
const ENTITIES = 1_000;

const transfer = new StateTransfer({
  typeName: 'Stateful',
  config: {
    maxEntitySnapshotBytes: 1024 * 1024,
    stateChunkBytes: 256 * 1024,
    maxHandOffStateBytes: 64 * 1024 * 1024,
    handOffTimeoutMs: 60_000,
  },
  logger: silentLogger(),
});
const snapshots = Array.from({ length: ENTITIES }, (_, i) => ({
  entityId: `entity-${i}`,
  ok: true as const,
  value: { counter: i, data: 'x'.repeat(1024) },
}));

const [from, to] = await Promise.all([
  TcpTransport.start({ system: 'bench' }),
  TcpTransport.start({ system: 'bench' }),
]);
for (const t of [from, to]) for (const family of MESSAGE_FAMILIES) t.register(family);
let arrived = 0;
let done: (() => void) | undefined;
let expected = 0;
to.onMessage((_from, message) => {
  if (message.type !== 'ShardStateChunk') return;
  if (++arrived === expected) done?.();
});

/** One hand-off's chunks, freshly packed (new message objects: no cached encoding), sent and received. */
async function round(handOffId: number): Promise<number> {
  const chunks = transfer.outgoing(1, handOffId, { snapshots });
  arrived = 0;
  expected = chunks.length;
  const all = new Promise<void>((resolve) => (done = resolve));
  const start = performance.now();
  // As a region's link sends them to a peer on this protocol: the packed binary, not the list too.
  for (const chunk of chunks) from.send(to.self, stateOnWire(chunk, PROTOCOL_VERSION) as typeof chunk);
  await all;
  return performance.now() - start;
}

try {
  for (let i = 1; i <= 20; i++) await round(i);
  const cpuBefore = process.cpuUsage();
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) times.push(await round(1000 + i));
  const cpu = process.cpuUsage(cpuBefore);
  const line = { rounds, medianMs: summarize(times).median, cpuMsPerRound: (cpu.user + cpu.system) / 1000 / rounds };
  process.stdout.write(`${JSON.stringify(line, (_k, v: unknown) => (typeof v === 'number' ? +v.toFixed(3) : v))}\n`);
} finally {
  await Promise.all([from.close(), to.close()]);
}
