// Reliable `send`, both ends in one region. As the sender: every send is kept (bounded, per region and per
// shard) with its sequence number until its entity processed it, and is routed again on each retry tick
// (across hand-offs, lost connections and a crash of its host, to wherever the shard lives then). As the
// host: a retried copy is recognised by its sender, the sender's incarnation and its sequence number, and is
// not processed twice while this host lives (a copy of one still running is dropped; of one done, answered).
// After a crash of the host the new host may process a send again: at-least-once.
import { randomInt } from 'node:crypto';
import type { ReliableMark, ReplyTo } from '../protocol/messages.js';
import type { EntityOutcome, ReplyFn } from './entity.js';
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

interface Seen {
  readonly running: Set<number>;
  readonly done: Map<number, boolean>;
}

export interface ReliableLimits {
  readonly maxOutstandingSends: number;
  readonly maxOutstandingSendsPerShard: number;
}

/** Sender incarnations a host remembers per sender node (a restarted node has a new one). */
const INCARNATIONS_PER_SENDER = 2;
/** Processed sequence numbers a host remembers per sender incarnation, at most. */
const MAX_DONE_PER_SENDER = 200_000;

export class ReliableDelivery {
  /** This region's incarnation as a sender: random, so a restarted node's sequence numbers are new ones. */
  readonly incarnation = randomInt(1, 2 ** 47);
  private readonly outstanding = new Map<number, Outstanding>();
  private readonly perShard = new Map<number, number>();
  private nextSeq = 1;
  /** As host: per sender node, per incarnation, the sequence numbers running and done here (done: did it succeed). */
  private readonly seen = new Map<string, Map<number, Seen>>();
  private readonly counts = { redelivered: 0, deduplicated: 0 };

  constructor(private readonly limits: ReliableLimits) {}

  /** The region's stats of reliable sends (see RegionStats). */
  stats(): { messagesRedelivered: number; messagesDeduplicated: number; sendsOutstanding: number } {
    return {
      messagesRedelivered: this.counts.redelivered,
      messagesDeduplicated: this.counts.deduplicated,
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
    this.counts.redelivered += copies.length;
    return copies;
  }

  /**
   * As host: the reply to give a send's entity, or undefined when this copy is a duplicate (answered here
   * if the first copy was already processed). The reply of a send carries no value: its caller gets none.
   */
  admit(sender: string, mark: ReliableMark, reply: (outcome: EntityOutcome) => void): ReplyFn | undefined {
    const entry = this.entry(sender, mark.incarnation);
    // Done sequence numbers are added in about ascending order: forget from the oldest up to `below`, and
    // the oldest beyond a hard cap (a sender that never reports progress).
    for (const seq of entry.done.keys()) {
      if (seq >= mark.below && entry.done.size <= MAX_DONE_PER_SENDER) break;
      entry.done.delete(seq);
    }
    if (entry.running.has(mark.seq) || entry.done.has(mark.seq)) {
      this.counts.deduplicated++;
      // The first answer was lost: the same answer again (a failure's text is not kept, only that it failed).
      const succeeded = entry.done.get(mark.seq);
      if (succeeded === true) reply({ ok: true, value: null });
      else if (succeeded === false) reply({ ok: false, error: 'the entity failed on this message (reported before)' });
      return undefined;
    }
    entry.running.add(mark.seq);
    return (outcome) => {
      entry.running.delete(mark.seq);
      if (mark.seq >= mark.below) entry.done.set(mark.seq, outcome.ok);
      reply(outcome.ok ? { ok: true, value: null } : outcome);
    };
  }

  private entry(sender: string, incarnation: number): Seen {
    let bySender = this.seen.get(sender);
    if (bySender === undefined) {
      bySender = new Map();
      this.seen.set(sender, bySender);
    }
    let entry = bySender.get(incarnation);
    if (entry === undefined) {
      entry = { running: new Set(), done: new Map() };
      bySender.set(incarnation, entry);
      // The oldest incarnations of a sender are forgotten: that node restarted since.
      for (const old of bySender.keys()) {
        if (bySender.size <= INCARNATIONS_PER_SENDER) break;
        bySender.delete(old);
      }
    }
    return entry;
  }
}
