// The reliable sends one durable entity processed, committed with its state: a retried copy that reaches the
// entity's next host after a crash is recognised there and answered without being applied again. Kept per
// sender node and incarnation, forgetting what the sender said it retries no more (its `below`), and bounded.
import type { ReliableMark } from '../protocol/messages.js';
import { isAddress, isRequestId } from '../protocol/wire-values.js';

/** A reliable send as the host sees it: the sender's node and its mark. */
export interface SendMark extends ReliableMark {
  readonly node: string;
}

/** Sender incarnations one entity remembers (the oldest are forgotten first). */
const MAX_SENDERS = 64;
/** Sequence numbers remembered per sender incarnation, the newest (the sender's `below` normally keeps it small). */
const MAX_SEQS_PER_SENDER = 4_096;

interface SenderMarks {
  below: number;
  readonly done: Set<number>;
  readonly failed: Set<number>;
}

/** The marks of one entity, as stored: [node, incarnation, below, done, failed] per sender incarnation. */
export type StoredMarks = ReadonlyArray<readonly [string, number, number, number[], number[]]>;

export class SendMarks {
  private readonly senders = new Map<string, SenderMarks>();

  /** Whether the send was processed, and whether the entity failed on it; undefined when not seen. */
  seen(mark: SendMark): { readonly failed: boolean } | undefined {
    const sender = this.senders.get(keyOf(mark));
    if (sender === undefined || !sender.done.has(mark.seq)) return undefined;
    return { failed: sender.failed.has(mark.seq) };
  }

  /** Records that the entity processed the send (`failed`: its receive threw). */
  add(mark: SendMark, failed: boolean): void {
    const key = keyOf(mark);
    let sender = this.senders.get(key);
    if (sender === undefined) {
      sender = { below: 0, done: new Set(), failed: new Set() };
      this.senders.set(key, sender);
      for (const old of this.senders.keys()) {
        if (this.senders.size <= MAX_SENDERS) break;
        this.senders.delete(old);
      }
    }
    if (mark.below > sender.below) {
      sender.below = mark.below;
      for (const seq of sender.done) if (seq < sender.below) forget(sender, seq);
    }
    sender.done.add(mark.seq);
    if (failed) sender.failed.add(mark.seq);
    for (const seq of sender.done) {
      if (sender.done.size <= MAX_SEQS_PER_SENDER) break;
      forget(sender, seq);
    }
  }

  toStored(): StoredMarks {
    return [...this.senders].map(([key, { below, done, failed }]) => {
      const { node, incarnation } = parseKey(key);
      return [node, incarnation, below, [...done], [...failed]] as const;
    });
  }

  /** Marks as read back from the store; undefined when they are not what `toStored` writes. */
  static fromStored(value: unknown): SendMarks | undefined {
    if (!Array.isArray(value) || value.length > MAX_SENDERS) return undefined;
    const marks = new SendMarks();
    for (const item of value as unknown[]) {
      if (!Array.isArray(item) || item.length !== 5) return undefined;
      const [node, incarnation, below, done, failed] = item as unknown[];
      if (!isAddress(node) || !isRequestId(incarnation) || typeof below !== 'number') return undefined;
      if (!isSeqList(done) || !isSeqList(failed)) return undefined;
      marks.senders.set(`${incarnation} ${node}`, { below, done: new Set(done), failed: new Set(failed) });
    }
    return marks;
  }
}

function forget(sender: SenderMarks, seq: number): void {
  sender.done.delete(seq);
  sender.failed.delete(seq);
}

function keyOf(mark: SendMark): string {
  return `${mark.incarnation} ${mark.node}`;
}

function parseKey(key: string): { readonly node: string; readonly incarnation: number } {
  const space = key.indexOf(' ');
  return { incarnation: Number(key.slice(0, space)), node: key.slice(space + 1) };
}

function isSeqList(value: unknown): value is number[] {
  return Array.isArray(value) && value.length <= MAX_SEQS_PER_SENDER && value.every(isRequestId);
}
