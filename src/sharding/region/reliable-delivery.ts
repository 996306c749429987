// Reliable `send`, both ends in one region. As the sender: every send is kept (bounded, per region and per
// shard) with its sequence number until its entity processed it, and is routed again on each retry tick
// (across hand-offs, lost connections and a crash of its host, to wherever the shard lives then). As the
// host: a retried copy is recognised and not processed twice (dedup-table.ts, kept by region-host.ts), also
// after a graceful move of its shard. After a crash of the host the new host may process a send again.
import { randomInt } from 'node:crypto';
import type { ReplyTo } from '../protocol/messages.js';
import type { Envelope } from './region-buffer.js';

/** One send this region keeps retrying. */
interface Outstanding {
  readonly envelope: Envelope;
  readonly shardId: number;
  /** Some copy left this node (to a local mailbox or over the wire): it may have been applied. */
  left: boolean;
  /** Routed since the last retry tick: not retried before a whole tick passed. */
  fresh: boolean;
}

export interface ReliableLimits {
  readonly maxOutstandingSends: number;
  readonly maxOutstandingSendsPerShard: number;
}

export class ReliableDelivery {
  /** This region's incarnation as a sender: random, so a restarted node's sequence numbers are new ones. */
  readonly incarnation = randomInt(1, 2 ** 47);
  private readonly outstanding = new Map<number, Outstanding>();
  private readonly perShard = new Map<number, number>();
  private nextSeq = 1;
  private redelivered = 0;

  constructor(private readonly limits: ReliableLimits) {}

  /** The region's stats of reliable sends (see RegionStats). */
  stats(): { messagesRedelivered: number; sendsOutstanding: number } {
    return {
      messagesRedelivered: this.redelivered,
      sendsOutstanding: this.outstanding.size,
    };
  }

  /**
   * Keeps a new send; undefined when a bound is reached (the caller rejects it with `buffer_overflow`). Its
   * sequence number is its ask id: unique and ascending on this node.
   */
  open(shardId: number, entityId: string, payload: unknown, replyTo: ReplyTo): Envelope | undefined {
    const inShard = this.perShard.get(shardId) ?? 0;
    if (this.outstanding.size >= this.limits.maxOutstandingSends || inShard >= this.limits.maxOutstandingSendsPerShard)
      return undefined;
    const seq = replyTo.askId;
    this.nextSeq = seq + 1;
    // `below` is the oldest send still outstanding here: the host may forget only what lies under it.
    const below = this.outstanding.keys().next().value ?? seq;
    const envelope: Envelope = {
      shardId,
      entityId,
      payload,
      hops: 0,
      replyTo,
      reliable: { incarnation: this.incarnation, seq, below },
    };
    this.outstanding.set(seq, { envelope, shardId, left: false, fresh: true });
    this.perShard.set(shardId, inShard + 1);
    return envelope;
  }

  /** What the region did with a copy of send `seq`: `local` and `forwarded` mean it left this node. */
  routed(seq: number, result: string): void {
    const send = this.outstanding.get(seq);
    if (send === undefined) return;
    send.fresh = true;
    if (result === 'local' || result === 'forwarded') send.left = true;
  }

  /** Whether any copy of the send left this node. */
  hasLeft(seq: number): boolean {
    return this.outstanding.get(seq)?.left === true;
  }

  /** The send settled (processed, failed, or timed out): it is no longer retried. */
  closed(seq: number): void {
    const send = this.outstanding.get(seq);
    if (send === undefined) return;
    this.outstanding.delete(seq);
    const left = (this.perShard.get(send.shardId) ?? 1) - 1;
    if (left <= 0) this.perShard.delete(send.shardId);
    else this.perShard.set(send.shardId, left);
  }

  /**
   * Fresh copies of every send not waiting in the buffer (`waiting`), oldest first, each telling the host
   * the lowest sequence number still outstanding here (the host forgets those below it).
   */
  retries(waiting: (envelope: Envelope) => boolean): Envelope[] {
    const below = this.outstanding.keys().next().value ?? this.nextSeq;
    const copies: Envelope[] = [];
    for (const [seq, send] of this.outstanding) {
      if (send.fresh || waiting(send.envelope)) {
        send.fresh = false;
        continue;
      }
      copies.push({ ...send.envelope, reliable: { incarnation: this.incarnation, seq, below } });
    }
    this.redelivered += copies.length;
    return copies;
  }
}
