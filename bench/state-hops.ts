// A shard's state handed back and forth in this one process (issue 40): two StateTransfers, the old host's and the
// new home's, pass 1,000 entities x 1 KiB as S10 moves them (each hop the probed entity wakes on the new home,
// every other state is held and goes on at the next hop); the chunks are read as the wire gives them (unpacked
// from their bytes). Prints the median and p90 ms of a hop (pack, receive, restore, wake one, drain), and as the
// baseline in the same process the median ms to copy the same bytes once into memory already in use (a copy
// without the page faults of fresh memory), and their ratio. No transport, no other process: the figure to compare two builds' state path by, alternated in the
// same minutes. `npm run build && node dist/bench/state-hops.js [hops]`.
import { silentLogger } from '../src/logging.js';
import { unpackEntities } from '../src/sharding/protocol/packed-states.js';
import { MAX_ENTITIES_PER_CHUNK } from '../src/sharding/protocol/state-messages.js';
import { MAX_ENTITY_ID_LENGTH } from '../src/sharding/protocol/entity-messages.js';
import type { StoppedStates } from '../src/sharding/region/shard-state.js';
import { StateTransfer } from '../src/sharding/region/state-transfer.js';
import { summarize } from './lib/stats.js';

const hops = Number(process.argv[2] ?? 4_000);
const ENTITIES = 1_000;
const PROBE = 'entity-0';
const config = {
  maxEntitySnapshotBytes: 1024 * 1024,
  stateChunkBytes: 256 * 1024,
  maxHandOffStateBytes: 64 * 1024 * 1024,
  handOffTimeoutMs: 60_000,
};
const limits = { maxEntities: MAX_ENTITIES_PER_CHUNK, maxEntityIdLength: MAX_ENTITY_ID_LENGTH };
const hosts = [0, 1].map(() => new StateTransfer({ typeName: 'Stateful', config, logger: silentLogger() }));
let stopped: StoppedStates = {
  snapshots: Array.from({ length: ENTITIES }, (_, i) => ({
    entityId: `entity-${i}`,
    ok: true as const,
    value: 'x'.repeat(1024),
  })),
};

/** One hand-off from host `n % 2` to the other; returns the bytes it carried. */
function hop(n: number): Uint8Array[] {
  const [from, to] = [hosts[n % 2], hosts[(n + 1) % 2]] as [StateTransfer, StateTransfer];
  const chunks = from.outgoing(1, n, stopped, new Map(), () => {});
  for (const { part, last, packed } of chunks) {
    const entities = unpackEntities(packed as Uint8Array, limits);
    if (entities === undefined) throw new Error('a chunk that does not read');
    const place = last ? { last } : {};
    to.received({
      type: 'RestoreShardState',
      typeName: 'Stateful',
      shardId: 1,
      transferId: n,
      part,
      ...place,
      entities,
      packed,
    });
  }
  if (to.expect(1, n, 0) !== 'ready') throw new Error('the transfer is incomplete');
  const restored = to.restore(1);
  const woke = restored?.states.wake(PROBE);
  stopped = { snapshots: [{ entityId: PROBE, ok: true, value: woke?.value }], held: restored?.states.drain() };
  return chunks.map((chunk) => chunk.packed as Uint8Array);
}

for (let n = 0; n < 1_000; n++) hop(n);
const hopMs: number[] = [];
const copyMs: number[] = [];
const target = new Uint8Array(2 * ENTITIES * 1024);
for (let n = 1_000; n < 1_000 + hops; n++) {
  const start = performance.now();
  const carried = hop(n);
  hopMs.push(performance.now() - start);
  const copyStart = performance.now();
  let at = 0;
  for (const bytes of carried) {
    target.set(bytes, at);
    at += bytes.length;
  }
  copyMs.push(performance.now() - copyStart);
}
const hop50 = summarize(hopMs).median;
const copy50 = summarize(copyMs).median;
const p90 = [...hopMs].sort((a, b) => a - b)[Math.floor(hopMs.length * 0.9)] ?? 0;
const line = { hops, hopMedianMs: hop50, hopP90Ms: p90, copyMedianMs: copy50, ratio: hop50 / copy50 };
process.stdout.write(`${JSON.stringify(line, (_key, v: unknown) => (typeof v === 'number' ? +v.toFixed(3) : v))}\n`);
