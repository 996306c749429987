// Baseline 1, Pekko-style: every 1 s each node sends its whole placement map (plain JSON) to one random
// peer; a receiver that holds something the sender lacks answers with its own full map (push-pull, as
// Pekko's gossip exchange converges both sides). No change is sent when it happens: it waits for a tick.
import type { NodeAddress } from '../../src/cluster/address.js';
import { pick } from '../lib/seeded-random.js';
import { frame, parseEntries, type Entry } from './lww-map.js';
import { MapGossipNode, mapGossipProtocol, otherMembers } from './map-gossip-node.js';
import type { Protocol, SimContext } from './types.js';

export const FULL_GOSSIP_MS = 1000;
const GOSSIP = 0;
const REPLY = 1;

class FullStateNode extends MapGossipNode {
  constructor(context: SimContext, preloaded: ReadonlyArray<[number, Entry]>) {
    super(context, preloaded, otherMembers(context));
    context.clock.every(
      FULL_GOSSIP_MS,
      context.random() * FULL_GOSSIP_MS,
      () => this.tick(),
      () => !this.closed,
    );
  }

  private tick(): void {
    if (this.peers.length === 0) return;
    this.send(pick(this.peers, this.context.random), GOSSIP);
  }

  private send(to: NodeAddress, kind: number): void {
    this.context.transport.send(to, { type: 'PlacementUpdate', update: frame(kind, this.map.serialize()) });
  }

  protected receive(from: NodeAddress, bytes: Uint8Array): void {
    const { changed, remoteIsBehind } = this.map.mergeAll(parseEntries(bytes.subarray(1)));
    this.changed(changed);
    if (bytes[0] === GOSSIP && remoteIsBehind) this.send(from, REPLY);
  }
}

export const fullStateGossipProtocol: Protocol = mapGossipProtocol(
  'full',
  'full-state gossip 1 s (Pekko-style)',
  FullStateNode,
);
