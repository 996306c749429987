// The placement store used alone, without the cluster: three replicas linked in one process take concurrent,
// conflicting writes and converge to the same winner everywhere. Run it with
// `npm run build && node dist/examples/store-alone/main.js`; it exits 1 if the replicas do not agree.
import { PlacementReplicator, PlacementStore } from '@actor-ts/placement/crdt';

const names = ['node-a', 'node-b', 'node-c'];
const replicators = new Map<string, PlacementReplicator>();
const stores = new Map<string, PlacementStore>();

for (const name of names) {
  const store = new PlacementStore({ node: name });
  // The link is yours: here a frame reaches its peer on a later turn of the event loop, as on a network.
  const link = {
    send: (peer: string, bytes: Uint8Array) => setTimeout(() => replicators.get(peer)?.receive(name, bytes), 1),
  };
  replicators.set(name, new PlacementReplicator(store, link, { antiEntropyIntervalMs: 50 }));
  stores.set(name, store);
}
for (const [name, replicator] of replicators) for (const peer of names) if (peer !== name) replicator.addPeer(peer);

// Three operators pin shard 42 to three different nodes at once, before any replica hears from another.
stores.get('node-a')?.set('Counter', 42, 'app@10.0.0.1:7701');
stores.get('node-b')?.set('Counter', 42, 'app@10.0.0.2:7701');
stores.get('node-c')?.set('Counter', 42, 'app@10.0.0.3:7701');

const view = (store: PlacementStore): string => store.snapshot('Counter').placements.get(42)?.target ?? '(none)';
const deadline = Date.now() + 5_000;
const agree = (): boolean => new Set([...stores.values()].map(view)).size === 1;
while (!agree() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));

for (const [name, store] of stores) console.log(`${name} sees shard 42 on ${view(store)}`);
for (const replicator of replicators.values()) replicator.close();
console.log(agree() ? 'converged' : 'NOT converged');
process.exitCode = agree() ? 0 : 1;
