// The host's side of reliable `send`: which retried copies it must not process again. A copy is recognised
// by its sender node, the sender's incarnation and its sequence number, kept per shard, so that a graceful
// hand-off takes a copy of the shard's entries along with its entities' state (as the sends each entity
// processed) and the new host answers a retry of a send the old host processed without processing it again.
// The old host keeps its own (a transfer lost on the way, and the shard coming back, must not make it run a
// send twice) until the sender's progress passes them. A crash loses them with the host: at-least-once.
import type { ReliableMark } from '../protocol/messages.js';
import { isAddress, isRequestId } from '../protocol/wire-values.js';
import type { HostOutcome, ReplyFn } from './entity.js';
import type { EntityOutcome } from '../core/entity-api.js';

/** The sends of one sender incarnation one entity processed, as they travel with a hand-off. */
export interface ProcessedSends {
  readonly node: string;
  readonly incarnation: number;
  /** Sequence numbers done, ascending. */
  readonly done: ReadonlyArray<number>;
  /** Those of `done` whose entity failed on them (answered as failures again). */
  readonly failed: ReadonlyArray<number>;
}

/**
 * How far one sender incarnation has come: it retries none of its sends below `below` (a ReliableMark's `below`).
 * A hand-off carries what its old host knew (protocol 11), so the new home forgets what the old host forgot.
 */
export interface SenderProgress {
  readonly node: string;
  readonly incarnation: number;
  readonly below: number;
}

interface Seen {
  readonly running: Set<number>;
  /** Done sequence numbers in about ascending order, with the entity that processed each. */
  readonly done: Map<number, string>;
  readonly failed: Set<number>;
  /** The highest `below` the sender gave: it retries nothing under it any more. */
  below: number;
}

/** Sender incarnations a host remembers per sender node and shard (a restarted node has a new one). */
const INCARNATIONS_PER_SENDER = 2;
/** Processed sequence numbers a host remembers per shard and sender incarnation, at most. */
const MAX_DONE_PER_SENDER = 200_000;
/** Processed sequence numbers one entity takes along with a hand-off, at most (the newest). */
export const MAX_SENDS_PER_ENTITY = 10_000;

export class DedupTable {
  /** Per shard, per sender node, per incarnation. */
  private readonly shards = new Map<number, Map<string, Map<number, Seen>>>();
  private duplicates = 0;

  /** Retried copies not processed again, since the start. */
  get deduplicated(): number {
    return this.duplicates;
  }

  /**
   * The reply to give a send's entity, or undefined when this copy is a duplicate (answered here if the
   * first copy was already processed). The reply of a send carries no value: its caller gets none.
   */
  admit(
    sender: string,
    mark: ReliableMark,
    target: { readonly shardId: number; readonly entityId: string },
    reply: (outcome: HostOutcome) => void,
  ): ReplyFn | undefined {
    const entry = this.entry(target.shardId, sender, mark.incarnation);
    // Only when the sender's progress moved: on every send it would walk the table for nothing.
    if (mark.below > entry.below) {
      entry.below = mark.below;
      forgetBelow(entry, entry.below);
    }
    const { seq } = mark;
    if (entry.running.has(seq) || entry.done.has(seq)) {
      this.duplicates++;
      // The first answer was lost: the same answer again (a failure's text is not kept, only that it failed).
      if (entry.failed.has(seq)) reply({ ok: false, error: 'the entity failed on this message (reported before)' });
      else if (entry.done.has(seq)) reply(DONE);
      return undefined;
    }
    entry.running.add(seq);
    return (outcome) => {
      entry.running.delete(seq);
      // Not acknowledged (a durable commit failed or was fenced): not done, so the sender's retry runs it.
      if ('retry' in outcome && outcome.retry === true) return;
      if (seq >= entry.below) {
        entry.done.set(seq, target.entityId);
        if (!outcome.ok) entry.failed.add(seq);
        if (entry.done.size > MAX_DONE_PER_SENDER) forgetBelow(entry, entry.below);
      }
      reply(outcome.ok ? DONE : outcome);
    };
  }

  /** A copy of a shard's entries (it stopped here), by the entity that processed them, the newest bounded. */
  take(shardId: number): Map<string, ProcessedSends[]> {
    // What the senders retry no more need not travel.
    this.prune();
    const bySender = this.shards.get(shardId);
    const byEntity = new Map<string, ProcessedSends[]>();
    for (const [node, incarnations] of bySender ?? []) {
      for (const [incarnation, entry] of incarnations) {
        const perEntity = new Map<string, number[]>();
        for (const [seq, entityId] of entry.done) {
          const seqs = perEntity.get(entityId);
          if (seqs === undefined) perEntity.set(entityId, [seq]);
          else seqs.push(seq);
        }
        for (const [entityId, seqs] of perEntity) {
          const done = seqs.sort((x, y) => x - y).slice(-MAX_SENDS_PER_ENTITY);
          const failed = done.filter((seq) => entry.failed.has(seq));
          const list = byEntity.get(entityId);
          const sends: ProcessedSends = { node, incarnation, done, failed };
          if (list === undefined) byEntity.set(entityId, [sends]);
          else list.push(sends);
        }
      }
    }
    return byEntity;
  }

  /** The entries a shard starting here brought from its previous host, by the entity that processed them. */
  restore(shardId: number, byEntity: ReadonlyMap<string, ReadonlyArray<ProcessedSends>>): void {
    const bySender = new Map<Seen, Array<readonly [number, string]>>();
    for (const [entityId, sends] of byEntity) {
      for (const { node, incarnation, done, failed } of sends) {
        const entry = this.entry(shardId, node, incarnation);
        let list = bySender.get(entry);
        if (list === undefined) bySender.set(entry, (list = []));
        for (const seq of done) list.push([seq, entityId]);
        for (const seq of failed) entry.failed.add(seq);
      }
    }
    // In ascending order with what this host kept of the shard, as `admit` forgets them from the oldest up.
    for (const [entry, list] of bySender) {
      for (const kept of entry.done) list.push(kept);
      list.sort((x, y) => x[0] - y[0]);
      entry.done.clear();
      for (const [seq, entityId] of list) entry.done.set(seq, entityId);
    }
  }

  /**
   * Forgets, in every shard, what each sender incarnation said it retries no more (in any shard: its `below`
   * covers all its sends), so the entries of shards that moved away do not stay. Run now and then.
   */
  prune(): void {
    const highest = this.highestBelow();
    for (const [shardId, bySender, sender, incarnation, entry] of this.entries()) {
      forgetBelow(entry, highest.get(senderKey(sender, incarnation)) ?? 0);
      if (entry.done.size > 0 || entry.running.size > 0) continue;
      const incarnations = bySender.get(sender);
      incarnations?.delete(incarnation);
      if (incarnations?.size === 0) bySender.delete(sender);
      if (bySender.size === 0) this.shards.delete(shardId);
    }
  }

  /**
   * The progress of each sender incarnation with entries in the shard: the highest `below` any shard here heard
   * from it (what `take` pruned the shard's entries by), to travel with the shard's hand-off.
   */
  progressOf(shardId: number): SenderProgress[] {
    const senders = this.shards.get(shardId);
    if (senders === undefined) return [];
    const highest = this.highestBelow();
    const progress: SenderProgress[] = [];
    for (const [node, incarnations] of senders) {
      for (const incarnation of incarnations.keys()) {
        const below = highest.get(senderKey(node, incarnation)) ?? 0;
        if (below > 0) progress.push({ node, incarnation, below });
      }
    }
    return progress;
  }

  /**
   * What the shard's old host knew of its senders' progress (it came with the hand-off): the shard's entries
   * below it are forgotten here too, as the old host forgot them. Progress is never lowered.
   */
  advance(shardId: number, progress: ReadonlyArray<SenderProgress>): void {
    const senders = this.shards.get(shardId);
    for (const { node, incarnation, below } of progress) {
      const entry = senders?.get(node)?.get(incarnation);
      if (entry === undefined || below <= entry.below) continue;
      entry.below = below;
      forgetBelow(entry, below);
    }
  }

  /** A shard stopped here without a hand-off (nobody to give its entries to). */
  forget(shardId: number): void {
    this.shards.delete(shardId);
  }

  /** The highest `below` heard from each sender incarnation in any shard, by senderKey. */
  private highestBelow(): Map<string, number> {
    const highest = new Map<string, number>();
    for (const [, , sender, incarnation, entry] of this.entries()) {
      const k = senderKey(sender, incarnation);
      highest.set(k, Math.max(highest.get(k) ?? 0, entry.below));
    }
    return highest;
  }

  private *entries(): Generator<[number, Map<string, Map<number, Seen>>, string, number, Seen]> {
    for (const [shardId, bySender] of this.shards)
      for (const [sender, incarnations] of bySender)
        for (const [incarnation, entry] of incarnations) yield [shardId, bySender, sender, incarnation, entry];
  }

  private entry(shardId: number, sender: string, incarnation: number): Seen {
    let bySender = this.shards.get(shardId);
    if (bySender === undefined) {
      bySender = new Map();
      this.shards.set(shardId, bySender);
    }
    let incarnations = bySender.get(sender);
    if (incarnations === undefined) {
      incarnations = new Map();
      bySender.set(sender, incarnations);
    }
    let entry = incarnations.get(incarnation);
    if (entry === undefined) {
      entry = { running: new Set(), done: new Map(), failed: new Set(), below: 0 };
      incarnations.set(incarnation, entry);
      // The oldest incarnations of a sender are forgotten: that node restarted since.
      for (const old of incarnations.keys()) {
        if (incarnations.size <= INCARNATIONS_PER_SENDER) break;
        incarnations.delete(old);
      }
    }
    return entry;
  }
}

const DONE: EntityOutcome = { ok: true, value: null };

const senderKey = (sender: string, incarnation: number): string => `${incarnation} ${sender}`;

/**
 * Done sequence numbers are added in about ascending order: forgets from the oldest up to `below`, and the
 * oldest beyond a hard cap (a sender that never reports progress).
 */
function forgetBelow(entry: Seen, below: number): void {
  for (const seq of entry.done.keys()) {
    if (seq >= below && entry.done.size <= MAX_DONE_PER_SENDER) break;
    entry.done.delete(seq);
    entry.failed.delete(seq);
  }
}

/** Sender incarnations one entity's transfer may name. */
export const MAX_SENDERS_PER_ENTITY = 1_000;

/** Checks processed sends as they arrived with a transfer (untrusted bytes); undefined when malformed. */
export function parseProcessedSends(value: unknown): ProcessedSends[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_SENDERS_PER_ENTITY) return undefined;
  const parsed: ProcessedSends[] = [];
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
    const { node, incarnation, done, failed } = item as Record<string, unknown>;
    if (!isAddress(node) || !isRequestId(incarnation) || !isSequenceList(done) || !isSequenceList(failed))
      return undefined;
    parsed.push({ node, incarnation, done, failed });
  }
  return parsed;
}

function isSequenceList(value: unknown): value is number[] {
  return Array.isArray(value) && value.length <= MAX_SENDS_PER_ENTITY && value.every(isRequestId);
}
