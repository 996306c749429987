// Baseline 2, Akka Distributed Data style: each node buffers the deltas of its own writes and, every
// 400 ms (gossip-interval 2 s / divisor 5), sends each of the next 3 peers in round-robin order the deltas
// it has not sent them yet; receivers apply deltas but do not relay them. Every 2 s a node also sends one
// random peer a 20-byte digest of its map; on a mismatch the two exchange full maps (Akka's Status ->
// Gossip(sendBack) -> Gossip), which is what repairs deltas lost to a partition.
// Akka's sequence numbers are not modelled, on purpose: for deltas that need causal delivery a receiver that
// sees a gap skips the delta and waits for the full-state exchange (DeltaNack is only a reply to writes with
// a consistency above local, which this workload does not make). Last-writer-wins deltas need no causal
// order, so here every delta is applied at once: never slower than Akka, so the baseline is not weakened.
import { createHash } from 'node:crypto';
import type { NodeAddress } from '../../src/cluster/address.js';
import { pick, shuffled } from '../lib/seeded-random.js';
import { decodeJson, encodeJson, frame, parseEntries, type Entry } from './lww-map.js';
import { MapGossipNode, mapGossipProtocol, otherMembers } from './map-gossip-node.js';
import type { Protocol, SimContext } from './types.js';

export const DELTA_TICK_MS = 400;
export const DELTA_SLICE = 3;
export const DIGEST_GOSSIP_MS = 2000;
const DELTA = 0;
const STATUS = 1;
const GOSSIP_SEND_BACK = 2;
const GOSSIP = 3;

class DeltaNode extends MapGossipNode {
  // Own deltas in write order; `sent` holds, per peer, how many of them that peer has been sent.
  private readonly deltas: Array<readonly [number, Entry]> = [];
  private readonly sent = new Map<string, number>();
  private roundRobin = 0;
  private digestCache: Uint8Array | undefined;

  constructor(context: SimContext, preloaded: ReadonlyArray<[number, Entry]>) {
    super(context, preloaded, shuffled(otherMembers(context), context.random));
    const alive = (): boolean => !this.closed;
    context.clock.every(DELTA_TICK_MS, context.random() * DELTA_TICK_MS, () => this.deltaTick(), alive);
    context.clock.every(DIGEST_GOSSIP_MS, context.random() * DIGEST_GOSSIP_MS, () => this.statusTick(), alive);
  }

  protected override wrote(shardId: number, entry: Entry): void {
    this.deltas.push([shardId, entry]);
  }

  private deltaTick(): void {
    if (
      this.peers.length === 0 ||
      this.peers.every((peer) => (this.sent.get(peer.toString()) ?? 0) >= this.deltas.length)
    ) {
      return;
    }
    const slice = Math.min(DELTA_SLICE, this.peers.length);
    for (let i = 0; i < slice; i++) {
      const peer = this.peers[(this.roundRobin + i) % this.peers.length] as NodeAddress;
      const from = this.sent.get(peer.toString()) ?? 0;
      if (from >= this.deltas.length) continue;
      this.sent.set(peer.toString(), this.deltas.length);
      this.sendFrame(peer, DELTA, encodeJson(this.deltas.slice(from)));
    }
    this.roundRobin = (this.roundRobin + slice) % this.peers.length;
  }

  private statusTick(): void {
    if (this.peers.length === 0) return;
    this.sendFrame(pick(this.peers, this.context.random), STATUS, this.digest());
  }

  protected receive(from: NodeAddress, bytes: Uint8Array): void {
    const payload = bytes.subarray(1);
    switch (bytes[0]) {
      case DELTA: {
        const changed: number[] = [];
        for (const [shardId, entry] of decodeJson(payload) as Array<[number, Entry]>) {
          if (this.map.mergeEntry(shardId, entry)) changed.push(shardId);
        }
        this.changed(changed);
        return;
      }
      case STATUS:
        if (!equalBytes(payload, this.digest())) this.sendFrame(from, GOSSIP_SEND_BACK, this.map.serialize());
        return;
      default: {
        const { changed, remoteIsBehind } = this.map.mergeAll(parseEntries(payload));
        this.changed(changed);
        if (bytes[0] === GOSSIP_SEND_BACK && remoteIsBehind) this.sendFrame(from, GOSSIP, this.map.serialize());
      }
    }
  }

  private sendFrame(to: NodeAddress, kind: number, payload: Uint8Array): void {
    this.context.transport.send(to, { type: 'PlacementUpdate', update: frame(kind, payload) });
  }

  private digest(): Uint8Array {
    this.digestCache ??= createHash('sha1').update(this.map.serialize()).digest();
    return this.digestCache;
  }

  protected override changed(shardIds: readonly number[]): void {
    if (shardIds.length > 0) this.digestCache = undefined;
    super.changed(shardIds);
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export const deltaGossipProtocol: Protocol = mapGossipProtocol(
  'delta',
  'delta gossip 400 ms x 3 (Akka-style)',
  DeltaNode,
);
