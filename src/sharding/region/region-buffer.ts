// A region's holding area for messages whose shard has no known home yet: one queue per shard, bounded in
// total by `bufferSize`, so a coordinator that does not answer cannot make a region grow without limit.
import type { Logger } from '../../logging.js';
import type { ShardingMessage } from '../protocol/messages.js';

type EntityEnvelope = Extract<ShardingMessage, { readonly type: 'EntityEnvelope' }>;

/** A message for one entity, as the region routes it: an EntityEnvelope without its type name. */
export type Envelope = Omit<EntityEnvelope, 'type' | 'typeName'>;

/**
 * The envelope of a message from the wire. Field by field, not by rest destructuring: this runs for every
 * message, and V8 copies named fields much faster.
 */
export function fromWire(message: EntityEnvelope): Envelope {
  const { shardId, entityId, payload, hops, replyTo, reliable } = message;
  if (replyTo === undefined) return { shardId, entityId, payload, hops };
  return reliable === undefined
    ? { shardId, entityId, payload, hops, replyTo }
    : { shardId, entityId, payload, hops, replyTo, reliable };
}

/** The message that carries `envelope` one hop further, to the region of `typeName` on another node. */
export function toWire(typeName: string, envelope: Envelope): EntityEnvelope {
  const { shardId, entityId, payload, hops, replyTo, reliable } = envelope;
  const type = 'EntityEnvelope';
  if (replyTo === undefined) return { type, typeName, shardId, entityId, payload, hops: hops + 1 };
  return reliable === undefined
    ? { type, typeName, shardId, entityId, payload, hops: hops + 1, replyTo }
    : { type, typeName, shardId, entityId, payload, hops: hops + 1, replyTo, reliable };
}

/** What became of a buffered message: dropped (buffer full), queued, or queued as its shard's first. */
export type BufferResult = 'dropped' | 'queued' | 'first';

export class RegionBuffer {
  private readonly queues = new Map<number, Envelope[]>();
  private total = 0;
  private drops = 0;
  /** This node's own asks waiting here (hop 0), by ask id: a timed-out ask takes its message back. */
  private readonly ownAsks = new Map<number, Envelope>();

  constructor(
    private readonly bufferSize: number,
    private readonly logger: Logger,
  ) {}

  /** Messages waiting now. */
  get size(): number {
    return this.total;
  }

  /** Messages dropped because the buffer was full, since the start. */
  get overflowDrops(): number {
    return this.drops;
  }

  /** Shards with messages waiting. */
  shardIds(): number[] {
    return [...this.queues.keys()];
  }

  /** Queues a message; `first` tells the region to ask for the shard's home (nobody waits for it yet). */
  add(envelope: Envelope): BufferResult {
    const { shardId } = envelope;
    if (this.total >= this.bufferSize) {
      this.drops++;
      // The first drop and every thousandth: a full buffer under load would otherwise flood the log.
      if (this.drops === 1 || this.drops % 1000 === 0) {
        this.logger.warn(
          { shardId, bufferSize: this.bufferSize, dropped: this.drops },
          'region buffer full: message dropped',
        );
      }
      return 'dropped';
    }
    this.total++;
    if (envelope.hops === 0 && envelope.replyTo !== undefined) this.ownAsks.set(envelope.replyTo.askId, envelope);
    const queue = this.queues.get(shardId);
    if (queue !== undefined) {
      queue.push(envelope);
      return 'queued';
    }
    this.queues.set(shardId, [envelope]);
    return 'first';
  }

  /** Removes and returns a shard's waiting messages, oldest first. */
  take(shardId: number): Envelope[] | undefined {
    const queue = this.queues.get(shardId);
    if (queue === undefined) return undefined;
    this.queues.delete(shardId);
    this.total -= queue.length;
    for (const envelope of queue)
      if (envelope.hops === 0 && envelope.replyTo !== undefined) this.ownAsks.delete(envelope.replyTo.askId);
    return queue;
  }

  /** Whether this node's ask (or send) `askId` waits here. */
  holdsAsk(askId: number): boolean {
    return this.ownAsks.has(askId);
  }

  /** Removes this node's ask `askId` if its message still waits here; true when it did (it is never sent). */
  withdrawAsk(askId: number): boolean {
    const envelope = this.ownAsks.get(askId);
    if (envelope === undefined) return false;
    this.ownAsks.delete(askId);
    const queue = this.queues.get(envelope.shardId);
    const index = queue?.indexOf(envelope) ?? -1;
    if (queue === undefined || index < 0) return false;
    queue.splice(index, 1);
    if (queue.length === 0) this.queues.delete(envelope.shardId);
    this.total--;
    return true;
  }

  clear(): void {
    this.queues.clear();
    this.ownAsks.clear();
    this.total = 0;
  }
}
