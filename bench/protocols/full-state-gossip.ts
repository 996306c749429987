// Baseline 1, Pekko-style: every 1 s each node sends its whole placement map (plain JSON) to one random
// peer; a receiver that holds something the sender lacks answers with its own full map (push-pull, as
// Pekko's gossip exchange converges both sides). No change is sent when it happens: it waits for a tick.
import type { NodeAddress } from '../../src/cluster/address.js';
import { pick } from '../lib/seeded-random.js';
import { LwwMap, frame, parseEntries, type Entry } from './lww-map.js';
import type { Protocol, SimContext, SimNode, Stamp } from './types.js';

export const FULL_GOSSIP_MS = 1000;
const GOSSIP = 0;
const REPLY = 1;

export const fullStateGossipProtocol: Protocol = {
  id: 'full',
  label: 'full-state gossip 1 s (Pekko-style)',
  preload(entries, now) {
    return entries.map(([shardId, target]): [number, Entry] => [shardId, [target, now(), 'bench-preload']]);
  },
  create(context, preloaded) {
    return new FullStateNode(context, (preloaded as Array<[number, Entry]> | undefined) ?? []);
  },
};

class FullStateNode implements SimNode {
  private readonly map = new LwwMap();
  private readonly peers: NodeAddress[];
  private readonly listeners: Array<(shardIds: readonly number[]) => void> = [];
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(private readonly context: SimContext, preloaded: ReadonlyArray<[number, Entry]>) {
    for (const [shardId, entry] of preloaded) this.map.mergeEntry(shardId, entry);
    this.peers = context.all.filter((address) => !address.equals(context.self));
    this.unsubscribe = context.transport.onMessage((from, message) => {
      if (message.type === 'PlacementUpdate') this.receive(from, message.update);
    });
    context.clock.every(FULL_GOSSIP_MS, context.random() * FULL_GOSSIP_MS, () => this.tick(), () => !this.closed);
  }

  write(shardId: number, target: string): Stamp {
    const entry = this.map.write(shardId, target, this.context.now(), this.context.self.toString());
    this.notify([shardId]);
    return { wallMs: entry[1], counter: 0, node: entry[2] };
  }

  read(shardId: number): string | undefined {
    return this.map.read(shardId);
  }

  stamp(shardId: number): Stamp | undefined {
    return this.map.stamp(shardId);
  }

  onChange(listener: (shardIds: readonly number[]) => void): void {
    this.listeners.push(listener);
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
  }

  private tick(): void {
    if (this.peers.length === 0) return;
    this.send(pick(this.peers, this.context.random), GOSSIP);
  }

  private send(to: NodeAddress, kind: number): void {
    this.context.transport.send(to, { type: 'PlacementUpdate', update: frame(kind, this.map.serialize()) });
  }

  private receive(from: NodeAddress, bytes: Uint8Array): void {
    const { changed, remoteIsBehind } = this.map.mergeAll(parseEntries(bytes.subarray(1)));
    if (changed.length > 0) this.notify(changed);
    if (bytes[0] === GOSSIP && remoteIsBehind) this.send(from, REPLY);
  }

  private notify(shardIds: readonly number[]): void {
    for (const listener of this.listeners) listener(shardIds);
  }
}
