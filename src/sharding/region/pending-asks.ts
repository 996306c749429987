// The asks this node is waiting on: each has an id that travels in `replyTo`, a timeout, and settles once
// (by the entity's answer, a local failure, its timeout, or the node's shutdown).
import { systemScheduler, type Cancellable, type Scheduler } from '../../cluster/scheduler.js';
import { ActorTsError } from '../../errors.js';
import type { HostOutcome } from '../core/entity-api.js';

/** How a failed outcome is reported: the entity failed, or the message never reached it. */
export type AskFailure = 'entity_failed' | 'buffer_overflow';

/**
 * A `timeout` that says what is known: `delivered: false` when the message was still in this node's buffer
 * and was removed there (it is never applied), `delivered: true` when it had left this node (it may have been
 * applied, or not: the outcome is unknown).
 */
export class DeliveryTimeoutError extends ActorTsError {
  constructor(
    message: string,
    readonly delivered: boolean,
  ) {
    super(
      'timeout',
      `${message}; ${delivered ? 'delivered: true (it left this node, outcome unknown)' : "delivered: false (withdrawn from this node's buffer, never applied)"}`,
    );
  }
}

interface PendingAsk {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly settled: Settled | undefined;
  /** Resolves with nothing, whatever the answer carried. */
  readonly valueless: boolean;
  readonly describeTimeout: () => string;
  readonly withdraw: (id: number) => boolean;
  readonly deadline: Deadline;
}

/**
 * One timer for the asks opened with one timeout within one millisecond of the scheduler's clock: a timer per ask was a tenth of a local send. The later asks of that millisecond may time
 * out up to a millisecond early, as Node's own timers may, which start at a whole millisecond.
 */
interface Deadline {
  readonly timeoutMs: number;
  /** The scheduler's now() when its timer started. */
  readonly startedAt: number;
  readonly ids: number[];
  /** Asks of `ids` still waiting; the timer is cleared when none is. */
  waiting: number;
  timer: Cancellable | undefined;
}

/** How an ask ended: `answered` by its entity (ok or failed), or not (`timedOut` by its deadline, refused, shut down). */
export interface AskEnd {
  readonly answered: boolean;
  readonly timedOut?: DeliveryTimeoutError;
}

/** Told once an ask settled, however, before its answer is given. */
export type Settled = (id: number, end: AskEnd) => void;

const ANSWERED: AskEnd = { answered: true };
const NOT_ANSWERED: AskEnd = { answered: false };

export class PendingAsks {
  private readonly pending = new Map<number, PendingAsk>();
  /** The latest deadline of each timeout while some ask of it waits: asks opened in its millisecond join it. */
  private readonly joinable = new Map<number, Deadline>();
  private nextId = 1;
  private timedOutCount = 0;

  /** @param scheduler the clock and timers of the deadlines (default systemScheduler). */
  constructor(private readonly scheduler: Scheduler = systemScheduler) {}

  /** Asks that ended by their timeout, since the start. */
  get timedOut(): number {
    return this.timedOutCount;
  }

  /** Asks still waiting. */
  get size(): number {
    return this.pending.size;
  }

  /**
   * Opens an ask: its id (for `replyTo`) and the answer, which rejects with `timeout` and the text of
   * `describeTimeout` after `timeoutMs` unless settled first. `withdraw` is asked at the timeout to take the
   * message back from wherever it still waits on this node; true means it never left (`delivered: false`).
   * `settled` is told when the ask ends (a send's retries end with it), and a `valueless` ask resolves with
   * nothing whatever the answer carried: no second promise per send for either.
   */
  open<R>(
    timeoutMs: number,
    describeTimeout: () => string,
    withdraw: (id: number) => boolean = () => false,
    { settled, valueless = false }: { readonly settled?: Settled; readonly valueless?: boolean } = {},
  ): { readonly id: number; readonly answer: Promise<R> } {
    const id = this.nextId++;
    const deadline = this.deadlineFor(timeoutMs);
    deadline.ids.push(id);
    deadline.waiting++;
    const answer = new Promise<R>((resolve, reject) => {
      this.pending.set(id, {
        resolve: resolve as (value: unknown) => void,
        reject,
        settled,
        valueless,
        describeTimeout,
        withdraw,
        deadline,
      });
    });
    return { id, answer };
  }

  /** Settles an ask; false when it is no longer waiting (answered, timed out, or never opened here). */
  settle(id: number, outcome: HostOutcome, failure: AskFailure = 'entity_failed'): boolean {
    const ask = this.pending.get(id);
    if (ask === undefined) return false;
    this.pending.delete(id);
    this.release(ask.deadline);
    ask.settled?.(id, outcome.ok || failure === 'entity_failed' ? ANSWERED : NOT_ANSWERED);
    if (outcome.ok) ask.resolve(ask.valueless ? undefined : outcome.value);
    // A host's typed reason (a durable store down, a fenced shard) is the rejection's code.
    else ask.reject(new ActorTsError('code' in outcome ? outcome.code : failure, outcome.error));
    return true;
  }

  /** Rejects every waiting ask with `error` (the node is shutting down). */
  failAll(error: Error): void {
    const asks = [...this.pending];
    this.pending.clear();
    this.joinable.clear();
    for (const [id, ask] of asks) {
      ask.deadline.timer?.cancel();
      ask.settled?.(id, NOT_ANSWERED);
      ask.reject(error);
    }
  }

  /** The deadline of this millisecond for `timeoutMs`, its timer started now when it is the first. */
  private deadlineFor(timeoutMs: number): Deadline {
    const now = this.scheduler.now();
    const joinable = this.joinable.get(timeoutMs);
    if (joinable !== undefined && joinable.startedAt === now) return joinable;
    const deadline: Deadline = { timeoutMs, startedAt: now, ids: [], waiting: 0, timer: undefined };
    deadline.timer = this.scheduler.setTimeout(() => this.expire(deadline), timeoutMs);
    this.joinable.set(timeoutMs, deadline);
    return deadline;
  }

  private release(deadline: Deadline): void {
    if (--deadline.waiting > 0) return;
    deadline.timer?.cancel();
    this.forget(deadline);
  }

  /** A deadline with no ask waiting, or past, is joined no more: a later ask starts a timer of its own. */
  private forget(deadline: Deadline): void {
    if (this.joinable.get(deadline.timeoutMs) === deadline) this.joinable.delete(deadline.timeoutMs);
  }

  private expire(deadline: Deadline): void {
    this.forget(deadline);
    for (const id of deadline.ids) {
      const ask = this.pending.get(id);
      if (ask === undefined || ask.deadline !== deadline) continue;
      this.pending.delete(id);
      this.timedOutCount++;
      const error = new DeliveryTimeoutError(ask.describeTimeout(), !ask.withdraw(id));
      ask.settled?.(id, { answered: false, timedOut: error });
      ask.reject(error);
    }
  }
}
