// Counts what every simulated cluster node sends, by message family and type, at the transport boundary:
// a wrapper around any Transport, so the membership code under test is not touched. Bytes are the exact
// msgpackr frame size (an extra encode per message), so they are counted only while `countBytes` is on.
import type { NodeAddress } from '../../src/cluster/address.js';
import { encodeMessage } from '../../src/cluster/transport/message-codec.js';
import type { MessageFamily, MessageListener, Transport, WireMessage } from '../../src/cluster/transport/transport.js';

export interface TypeCount {
  messages: number;
  bytes: number;
  /** Messages weighted by the member records they carry (see `FamilyTraffic.work`). */
  work: number;
}

export class FamilyTraffic {
  /** Off by default: encoding every message twice would double the cost of a join of 1,000 nodes. */
  countBytes = false;
  private readonly familyOf = new Map<string, string>();
  /** Keyed `family/type`. */
  readonly byType = new Map<string, TypeCount>();
  /** Messages sent, each weighted by the member records it carries (1 for a message with none). */
  work = 0;
  workLimit = Infinity;
  /** Called on every send once `work` passed `workLimit`; it may throw to stop the sender. */
  onOverBudget: (() => void) | undefined;

  registered(family: MessageFamily<WireMessage>): void {
    for (const type of family.types) this.familyOf.set(type, family.name);
  }

  record(message: WireMessage): void {
    const key = `${this.familyOf.get(message.type) ?? 'unregistered'}/${message.type}`;
    let entry = this.byType.get(key);
    if (entry === undefined) this.byType.set(key, (entry = { messages: 0, bytes: 0, work: 0 }));
    entry.messages++;
    if (this.countBytes) entry.bytes += encodeMessage(message).length;
    const work = 1 + memberRecords(message);
    entry.work += work;
    this.work += work;
    if (this.work > this.workLimit) this.onOverBudget?.();
  }

  /** A copy of the counts now, to subtract from a later one. */
  snapshot(): Map<string, TypeCount> {
    return new Map([...this.byType].map(([key, count]) => [key, { ...count }]));
  }

  /** Counts since `earlier` (a snapshot). */
  since(earlier: ReadonlyMap<string, TypeCount>): Map<string, TypeCount> {
    const out = new Map<string, TypeCount>();
    for (const [key, count] of this.byType) {
      const before = earlier.get(key) ?? { messages: 0, bytes: 0, work: 0 };
      out.set(key, {
        messages: count.messages - before.messages,
        bytes: count.bytes - before.bytes,
        work: count.work - before.work,
      });
    }
    return out;
  }

  total(): number {
    let messages = 0;
    for (const count of this.byType.values()) messages += count.messages;
    return messages;
  }
}

/** Member records a message carries: a gossip's member list (read-only look at the cluster family's shape). */
function memberRecords(message: WireMessage): number {
  const gossip = (message as { readonly gossip?: { readonly members?: unknown } }).gossip;
  return Array.isArray(gossip?.members) ? gossip.members.length : 0;
}

/** Reports every message to `traffic` before handing it to the wrapped transport. */
export class FamilyCountingTransport implements Transport {
  constructor(
    private readonly inner: Transport,
    private readonly traffic: FamilyTraffic,
  ) {}

  get self(): NodeAddress {
    return this.inner.self;
  }

  register<M extends WireMessage>(family: MessageFamily<M>): void {
    this.inner.register(family);
    this.traffic.registered(family as unknown as MessageFamily<WireMessage>);
  }

  send<M extends WireMessage>(to: NodeAddress, message: M): void {
    this.traffic.record(message);
    this.inner.send(to, message);
  }

  onMessage(listener: MessageListener): () => void {
    return this.inner.onMessage(listener);
  }

  reconnect(peer: NodeAddress): void {
    this.inner.reconnect?.(peer);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
