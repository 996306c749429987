// Counts what every simulated node sends, by message type, at the transport boundary: the same counter for
// the placement store and for the baselines, so messages and bytes compare like for like.
import type { NodeAddress } from '../../src/cluster/address.js';
import type { MessageListener, Transport } from '../../src/cluster/transport.js';
import { isFamilyMessage, type MessageFamily, type WireMessage } from '../../src/cluster/wire-message.js';
import { PLACEMENT_SYNC_MESSAGES, type PlacementSyncMessage } from '../../src/placement-replication/sync-messages.js';
import { wireSize } from './wire-size.js';

export class TrafficCounter {
  messages = 0;
  bytes = 0;
  readonly byType = new Map<string, { messages: number; bytes: number }>();

  record(message: PlacementSyncMessage): void {
    const size = wireSize(message);
    this.messages++;
    this.bytes += size;
    const entry = this.byType.get(message.type) ?? { messages: 0, bytes: 0 };
    entry.messages++;
    entry.bytes += size;
    this.byType.set(message.type, entry);
  }

  mark(): {
    readonly messages: number;
    readonly bytes: number;
    readonly updates: number;
    readonly updateBytes: number;
  } {
    const updates = this.byType.get('PlacementUpdate');
    return {
      messages: this.messages,
      bytes: this.bytes,
      updates: updates?.messages ?? 0,
      updateBytes: updates?.bytes ?? 0,
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
