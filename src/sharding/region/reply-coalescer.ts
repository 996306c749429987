// The answers without a value this node owes other nodes (every send's acknowledgement, an ask answered null),
// coalesced: those owed to one node within a tick leave in one EntityReplies frame, not one frame each. A send
// costs two frames where a tell costs one, and on a busy host the reply frames were most of the cost of a send
// beyond a tell's (a socket write and an encoding each). Answers with a value or a failure do not wait here.
import { MAX_REPLIES_PER_MESSAGE } from '../protocol/entity-messages.js';
import type { ShardingMessage } from '../protocol/messages.js';

/** Runs `flush` once the work of this turn of the event loop is done. */
export type Defer = (flush: () => void) => void;

/**
 * `setImmediate`: after every I/O callback of this turn and the microtasks each queued, so the replies to a
 * whole TCP read (many envelopes, each entity's mailbox draining over several microtasks) go in one frame.
 */
const afterThisTurn: Defer = (flush) => void setImmediate(flush);

export class ReplyCoalescer {
  /** Ask ids answered, by asking node, in the order answered. */
  private pending = new Map<string, number[]>();
  private scheduled = false;

  constructor(
    private readonly send: (to: string, message: ShardingMessage) => boolean,
    private readonly defer: Defer = afterThisTurn,
  ) {}

  /** Answers ask (or send) `askId` of `node` with null, in the next frame to that node. */
  add(node: string, askId: number): void {
    let askIds = this.pending.get(node);
    if (askIds === undefined) {
      askIds = [];
      this.pending.set(node, askIds);
    }
    askIds.push(askId);
    if (askIds.length >= MAX_REPLIES_PER_MESSAGE) {
      // A full frame goes at once: the receiver refuses a longer one.
      this.pending.delete(node);
      this.send(node, { type: 'EntityReplies', askIds });
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      this.defer(() => this.flush());
    }
  }

  /** Sends every answer waiting, one frame per node. */
  flush(): void {
    this.scheduled = false;
    if (this.pending.size === 0) return;
    const pending = this.pending;
    this.pending = new Map();
    for (const [node, askIds] of pending) this.send(node, { type: 'EntityReplies', askIds });
  }
}
