// Counts what every simulated node sends, by message type, at the transport boundary: the same counter for
// the placement store and for the baselines, so messages and bytes compare like for like.
import type { NodeAddress } from '../../src/cluster/address.js';
import type { MessageListener, Transport } from '../../src/cluster/transport/transport.js';
import { isFamilyMessage, type MessageFamily, type WireMessage } from '../../src/cluster/transport/wire-message.js';
import { PLACEMENT_SYNC_MESSAGES, type PlacementSyncMessage } from '../../src/placement-replication/sync-messages.js';
import { wireSize } from './wire-size.js';

/** What the counter holds at one moment; the difference of two marks is the traffic between them. */
export interface TrafficMark {
  readonly messages: number;
  readonly bytes: number;
  /** PlacementUpdate frames carrying content (pushes; before digests, relays too). */
  readonly updates: number;
  readonly updateBytes: number;
  /** Sync steps 2: content a peer asked for (a pull after a digest, anti-entropy, a join). */
  readonly step2: number;
  readonly step2Bytes: number;
  /** Sync steps 1: asks (anti-entropy, a pull after a digest). */
  readonly step1: number;
  /** Digests: a PlacementUpdate with a digest field and an empty update, no content. */
  readonly digests: number;
  readonly digestBytes: number;
}

// A digest rides in a PlacementUpdate (src/placement-replication/sync-messages.ts); counted apart, under this name.
const DIGEST = 'PlacementUpdate+digest';

export class TrafficCounter {
  messages = 0;
  bytes = 0;
  readonly byType = new Map<string, { messages: number; bytes: number }>();

  record(message: PlacementSyncMessage): void {
    const size = wireSize(message);
    this.messages++;
    this.bytes += size;
    const key = 'digest' in message && message.digest !== undefined ? DIGEST : message.type;
    const entry = this.byType.get(key) ?? { messages: 0, bytes: 0 };
    entry.messages++;
    entry.bytes += size;
    this.byType.set(key, entry);
  }

  mark(): TrafficMark {
    const of = (type: string) => this.byType.get(type) ?? { messages: 0, bytes: 0 };
    return {
      messages: this.messages,
      bytes: this.bytes,
      updates: of('PlacementUpdate').messages,
      updateBytes: of('PlacementUpdate').bytes,
      step2: of('PlacementSyncStep2').messages,
      step2Bytes: of('PlacementSyncStep2').bytes,
      step1: of('PlacementSyncStep1').messages,
      digests: of(DIGEST).messages,
      digestBytes: of(DIGEST).bytes,
    };
  }
}

/** A transport that reports every placement message to a shared counter before sending it. */
export class CountingTransport implements Transport {
  constructor(
    private readonly inner: Transport,
    private readonly counter: TrafficCounter,
  ) {
    // Every simulated protocol speaks the placement sync messages, with or without a PlacementReplication.
    inner.register(PLACEMENT_SYNC_MESSAGES);
  }

  get self(): NodeAddress {
    return this.inner.self;
  }

  register<M extends WireMessage>(family: MessageFamily<M>): void {
    this.inner.register(family);
  }

  send<M extends WireMessage>(to: NodeAddress, message: M): void {
    if (isFamilyMessage(PLACEMENT_SYNC_MESSAGES, message)) this.counter.record(message);
    this.inner.send(to, message);
  }

  onMessage(listener: MessageListener): () => void {
    return this.inner.onMessage(listener);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
