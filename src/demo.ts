// The README's main command until the cluster exists: three in-process placement replicas (node-c's clock an
// hour behind) take conflicting operator writes concurrently, replicate over an in-memory link with random
// delays, and must converge; prints what every replica sees per shard and exits 1 if they do not agree.
import { PlacementReplicator, PlacementStore, type Hlc, type Placement } from '../crdt/index.js';

const TYPE = 'Counter';
const HOUR = 3_600_000;
const DEADLINE_MS = 5_000;
const NODES = [
  { name: 'node-a', skewMs: 0 },
  { name: 'node-b', skewMs: 0 },
  { name: 'node-c', skewMs: -HOUR },
] as const;
const HOME = {
  a: 'app@10.0.0.1:7701',
  b: 'app@10.0.0.2:7701',
  c: 'app@10.0.0.3:7701',
} as const;

interface Replica {
  readonly name: string;
  readonly store: PlacementStore;
  readonly replicator: PlacementReplicator;
}

const replicas = new Map<string, Replica>();
let inFlight = 0;

for (const { name, skewMs } of NODES) {
  const store = new PlacementStore({ node: name, now: () => Date.now() + skewMs, log: print });
  // Every frame takes 1-20 ms, so frames overtake each other like on a real network.
  const link = {
    send(peer: string, bytes: Uint8Array): void {
      inFlight++;
      setTimeout(
        () => {
          inFlight--;
          replicas.get(peer)?.replicator.receive(name, bytes);
        },
        1 + Math.random() * 19,
      );
    },
  };
  const replicator = new PlacementReplicator(store, link, { antiEntropyIntervalMs: 100, log: print });
  replicas.set(name, { name, store, replicator });
}

function print(event: { level: string; message: string }): void {
  console.log(`  [${event.level}] ${event.message}`);
}

function replica(name: string): Replica {
  const found = replicas.get(name);
  if (found === undefined) throw new Error(`no replica ${name}`);
  return found;
}

function step(text: string): void {
  console.log(`- ${text}`);
}

async function main(): Promise<number> {
  console.log("Replicated placement store demo: three replicas, node-c's wall clock one hour behind.");
  console.log('node-c warns once per peer that their timestamps are far ahead, and does not move its clock.\n');
  for (const { name } of replicas.values()) {
    for (const peer of replicas.keys()) if (peer !== name) replica(name).replicator.addPeer(peer);
  }

  step('setup: node-a places shard 4 on node-a and shard 5 on node-c');
  replica('node-a').store.set(TYPE, 4, HOME.a);
  replica('node-a').store.set(TYPE, 5, HOME.c);
  await settle();

  step('concurrently, before any replica hears from another:');
  step('  shard 1: node-a -> node-a, node-b -> node-b, node-c -> node-c (three operators disagree)');
  replica('node-a').store.set(TYPE, 1, HOME.a);
  replica('node-b').store.set(TYPE, 1, HOME.b);
  replica('node-c').store.set(TYPE, 1, HOME.c);
  step('  shard 2: node-c -> node-c, node-a -> node-b');
  replica('node-c').store.set(TYPE, 2, HOME.c);
  replica('node-a').store.set(TYPE, 2, HOME.b);
  step('  shard 4: node-b removes the placement while node-c moves it to node-c');
  replica('node-b').store.remove(TYPE, 4);
  replica('node-c').store.set(TYPE, 4, HOME.c);
  step('  shard 3: node-b -> node-a');
  replica('node-b').store.set(TYPE, 3, HOME.a);
  await settle();

  step('after seeing shard 5, an operator on node-c (clock one hour behind) moves it to node-b');
  replica('node-c').store.set(TYPE, 5, HOME.b);

  const started = Date.now();
  const converged = await waitForConvergence(started + DEADLINE_MS);
  console.log('');
  printTable();
  for (const { name, replicator, store } of replicas.values()) {
    const r = replicator.stats();
    const s = store.stats();
    console.log(
      `${name}: sent ${r.framesSent} frames (${r.bytesSent} bytes), received ${r.framesReceived}, ` +
        `rejected ${r.framesRejected}; ${s.slots} slots, ${s.prunedSlots} pruned, ${s.driftRejected} drift warnings`,
    );
    replicator.close();
  }
  console.log(converged ? '\nAll replicas converged.' : `\nNOT converged within ${DEADLINE_MS} ms.`);
  return converged ? 0 : 1;
}

/** Waits until no frame is in flight (writes have spread by push, not yet by anti-entropy). */
async function settle(): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (inFlight > 0 && Date.now() < deadline) await sleep(5);
}

async function waitForConvergence(deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    if (inFlight === 0 && agreeEverywhere()) return true;
    await sleep(20);
  }
  return agreeEverywhere();
}

function agreeEverywhere(): boolean {
  const views = [...replicas.values()].map(({ store }) => render(store));
  const stateVectors = [...replicas.values()].map(({ store }) =>
    Buffer.from(store.encodeStateVector()).toString('hex'),
  );
  return views.every((v) => v === views[0]) && stateVectors.every((v) => v === stateVectors[0]);
}

function render(store: PlacementStore): string {
  return [...store.snapshot(TYPE).placements].map(([shard, p]) => `${shard}=${describe(p)}`).join(';');
}

function describe(p: Placement | undefined): string {
  return p === undefined ? '(no placement)' : `${p.target} ${formatHlc(p.hlc)} by ${p.writer}`;
}

function formatHlc(hlc: Hlc): string {
  return `${new Date(hlc.wallMs).toISOString().slice(11, 23)}+${hlc.counter}`;
}

function printTable(): void {
  const shards = new Set<number>([1, 2, 3, 4, 5]);
  const header = ['shard', 'replica', 'target', 'hlc (UTC time+counter)', 'writer'];
  const rows: string[][] = [];
  for (const shard of [...shards].sort((a, b) => a - b)) {
    const seen = [...replicas.values()].map(({ name, store }) => ({
      name,
      placement: store.snapshot(TYPE).placements.get(shard),
    }));
    seen.forEach(({ name, placement }, i) => {
      rows.push([
        i === 0 ? String(shard) : '',
        name,
        placement?.target ?? '(removed)',
        placement === undefined ? '-' : formatHlc(placement.hlc),
        placement?.writer ?? '-',
      ]);
    });
    const agree = seen.every(({ placement }) => describe(placement) === describe(seen[0]?.placement));
    rows.push(['', 'all agree?', agree ? 'yes' : 'NO', '', '']);
  }
  const widths = header.map((h, col) => Math.max(h.length, ...rows.map((r) => (r[col] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, col) => c.padEnd(widths[col] ?? 0))
      .join('  ')
      .trimEnd();
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
  console.log('');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
