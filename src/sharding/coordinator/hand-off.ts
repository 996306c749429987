// One shard's hand-off as an object: its id (echoed by ShardStopped, so only the report of this very stop
// ends it), its phase, the regions that have not yet stopped routing to the shard, and the timer that
// bounds the whole move. Also the source of hand-off ids.
import { randomInt } from 'node:crypto';
import type { Cancellable, Scheduler } from '../../cluster/scheduler.js';
import type { ShardingMessage } from '../protocol/messages.js';

/** 'begin': waiting for BeginHandOffAck from every region; 'handoff': waiting for the owner's ShardStopped. */
export type HandOffPhase = 'begin' | 'handoff';

export interface HandOffTimeout {
  readonly scheduler: Scheduler;
  /** When the hand-off started, on the scheduler's clock (for its duration). Default: the scheduler's now. */
  readonly startedAtMs?: number;
  readonly timeoutMs: number;
  /** Called once if the hand-off has not ended (been cancelled) within timeoutMs. */
  readonly onTimeout: (handOff: HandOff) => void;
}

export interface Outgoing {
  readonly to: string;
  readonly message: ShardingMessage;
}

export class HandOff {
  private currentPhase: HandOffPhase;
  private readonly pending: Set<string>;
  private readonly timer: Cancellable;
  private ended = false;
  readonly startedAtMs: number;

  constructor(
    readonly shardId: number,
    readonly id: number,
    readonly owner: string,
    phase: HandOffPhase,
    pendingAcks: Iterable<string>,
    timeout: HandOffTimeout,
  ) {
    this.currentPhase = phase;
    this.startedAtMs = timeout.startedAtMs ?? timeout.scheduler.now();
    // A hand-off that starts in its HandOff phase (adopted stopping shards, the down-removal margin) waits
    // for nobody's BeginHandOffAck.
    this.pending = phase === 'begin' ? new Set(pendingAcks) : new Set();
    this.timer = timeout.scheduler.setTimeout(() => {
      if (this.ended) return;
      this.ended = true;
      timeout.onTimeout(this);
    }, timeout.timeoutMs);
  }

  get phase(): HandOffPhase {
    return this.currentPhase;
  }

  get pendingAcks(): ReadonlySet<string> {
    return this.pending;
  }

  /** True once every region stopped routing to the shard and the HandOff may be sent. */
  get readyToHandOff(): boolean {
    return this.currentPhase === 'begin' && this.pending.size === 0;
  }

  /** A region acknowledged BeginHandOff, or is gone. True when that changed what this hand-off waits for. */
  acknowledged(region: string): boolean {
    return this.currentPhase === 'begin' && this.pending.delete(region);
  }

  enterHandOffPhase(): void {
    if (!this.readyToHandOff) throw new Error(`hand-off of shard ${this.shardId} is not ready for its HandOff phase`);
    this.currentPhase = 'handoff';
  }

  /**
   * Only the owner's answer to this hand-off's HandOff ends it. Anything else (a copy stopping elsewhere, a
   * late or duplicated report of an earlier stop, one answering a former coordinator) is no news, and acting
   * on it could allocate a shard that still runs.
   */
  isEndedBy(from: string, handOffId: number): boolean {
    return this.currentPhase === 'handoff' && from === this.owner && handOffId === this.id;
  }

  /** What to (re-)send for the current phase. */
  messages(typeName: string): Outgoing[] {
    const { shardId } = this;
    if (this.currentPhase === 'begin') {
      return [...this.pending].map((to) => ({ to, message: { type: 'BeginHandOff', typeName, shardId } }));
    }
    return [{ to: this.owner, message: { type: 'HandOff', typeName, shardId, handOffId: this.id } }];
  }

  /** Ends the hand-off's clock; idempotent. */
  cancel(): void {
    this.ended = true;
    this.timer.cancel();
  }
}

/**
 * Hand-off ids. A random start, so the ids of earlier coordinators (whose HandOffs a region may still answer
 * late) do not collide with this one's; wraps before leaving the safe integers.
 */
export class HandOffIds {
  private nextId: number;

  constructor(start: number = randomInt(1, 2 ** 47)) {
    if (!Number.isSafeInteger(start) || start < 1)
      throw new RangeError(`hand-off ids start at a positive safe integer, got ${start}`);
    this.nextId = start;
  }

  take(): number {
    const id = this.nextId;
    this.nextId = id >= Number.MAX_SAFE_INTEGER ? 1 : id + 1;
    return id;
  }
}
