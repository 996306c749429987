// Operator requests to a type's coordinator (shard locations, rebalance now, a rebalance round, explain, dry runs), from any
// node: each is re-sent every retry interval to wherever the coordinator runs by then, until its answer
// arrives or the request times out; re-sent at once (and a few times soon after) when the coordinator moves,
// and failed fast with `coordinator_unreachable` while the coordinator's node is unreachable, rather than
// waiting out a downing that may take seconds. Answers are matched by request id, type name and answer type.
import { systemScheduler, type Cancellable, type Scheduler } from '../cluster/scheduler.js';
import { ActorTsError } from '../errors.js';
import type { MessageRoutedTo, RegionLocation, ShardingMessage } from './protocol/messages.js';

/** Where every allocated shard of a type lives, as its coordinator knows it. */
export interface ShardLocations {
  readonly regions: ReadonlyArray<RegionLocation>;
  /** Shards whose hand-off is in progress: still listed under the region they are leaving until they stopped. */
  readonly handingOff: ReadonlyArray<number>;
}

/** What a manual rebalance did. */
export interface RebalanceNowResult {
  /** Shards whose hand-off started (or was already running). */
  readonly accepted: ReadonlyArray<number>;
  /** Shard ids outside 0 .. numberOfShards - 1. */
  readonly unknown: ReadonlyArray<number>;
  /** Shards never given a home (unallocated): nothing to move; their next message allocates them through the strategy. */
  readonly unallocated: ReadonlyArray<number>;
  /** @deprecated The same list as `unallocated`, under its old name; removed in the next minor release. */
  readonly homeless: ReadonlyArray<number>;
}

/** The requests and the answer type each one waits for. */
const ANSWER_TYPE = {
  GetShardLocations: 'ShardLocations',
  RebalanceNow: 'RebalanceNowResult',
  RequestRebalance: 'RebalanceRequested',
  ExplainShard: 'ShardExplained',
  DryRunPlacements: 'DryRunAnswer',
  DryRunRebalance: 'DryRunAnswer',
  DrainRegion: 'DrainStarted',
} as const satisfies Record<string, CoordinatorAnswer['type']>;

export type CoordinatorRequestType = keyof typeof ANSWER_TYPE;
/** A request as sent: the coordinator echoes its `requestId`. */
export type CoordinatorRequest = Extract<ShardingMessage, { readonly type: CoordinatorRequestType }>;
/** A request as the caller makes it: the client numbers it. */
export type CoordinatorRequestBody = CoordinatorRequest extends infer R
  ? R extends CoordinatorRequest
    ? Omit<R, 'requestId'>
    : never
  : never;
/** Every message routed to the requester is an answer to one of the requests above. */
export type CoordinatorAnswer = MessageRoutedTo<'requester'>;
export type AnswerTo<T extends CoordinatorRequestType> = Extract<
  CoordinatorAnswer,
  { readonly type: (typeof ANSWER_TYPE)[T] }
>;

export interface CoordinatorClientOptions {
  /** Sends to a node (a `system@host:port` key); never throws. */
  readonly send: (to: string, message: ShardingMessage) => void;
  readonly requestTimeoutMs: number;
  readonly retryIntervalMs: number;
  /** The clock and timers of the timeouts and re-sends; default systemScheduler. */
  readonly scheduler?: Scheduler;
}

/** Where a type's coordinator runs as this node sees it; `reachable` false while its node is unreachable. */
export interface CoordinatorTarget {
  readonly key: string;
  readonly reachable: boolean;
}

/**
 * Delays of the extra sends after the coordinator moved: the new coordinator's node may see the membership
 * change a moment after this node and drop what arrives before; these cover that moment without waiting a
 * full retry interval. Each one only while shorter than the retry interval.
 */
export const MOVED_RESEND_DELAYS_MS = [50, 150, 400, 1_000] as const;

interface PendingRequest {
  readonly request: CoordinatorRequest;
  readonly coordinator: () => CoordinatorTarget | undefined;
  /** The coordinator the request was last sent to. */
  lastTarget: string | undefined;
  readonly typeName: string;
  readonly answerType: CoordinatorAnswer['type'];
  readonly resolve: (answer: CoordinatorAnswer) => void;
  readonly reject: (error: Error) => void;
  readonly timer: Cancellable;
  readonly retry: Cancellable;
  resends: Cancellable[];
}

export class CoordinatorClient {
  private readonly pending = new Map<number, PendingRequest>();
  private nextId = 1;

  private readonly scheduler: Scheduler;

  constructor(private readonly options: CoordinatorClientOptions) {
    this.scheduler = options.scheduler ?? systemScheduler;
  }

  /**
   * Sends `body` to the coordinator `coordinator()` names at each attempt (none while it names nobody) and
   * resolves with the answer; rejects with `timeout` after `requestTimeoutMs`, and with
   * `coordinator_unreachable` as soon as the coordinator's node is unreachable (at the start or later).
   * `coordinator` may return a bare key, for a coordinator always taken as reachable.
   */
  request<B extends CoordinatorRequestBody>(
    body: B,
    coordinator: () => CoordinatorTarget | string | undefined,
  ): Promise<AnswerTo<B['type']>> {
    const requestId = this.nextId++;
    const request = { ...body, requestId } as CoordinatorRequest;
    const target = (): CoordinatorTarget | undefined => {
      const named = coordinator();
      return typeof named === 'string' ? { key: named, reachable: true } : named;
    };
    return new Promise<AnswerTo<B['type']>>((resolve, reject) => {
      const first = target();
      if (first !== undefined && !first.reachable) {
        reject(unreachable(request, first.key));
        return;
      }
      const timeoutMs = this.options.requestTimeoutMs;
      const timer = this.scheduler.setTimeout(() => {
        if (!this.forget(requestId)) return;
        const where = target()?.key ?? 'no coordinator (no Up member)';
        reject(
          new ActorTsError(
            'timeout',
            `${request.type} for "${request.typeName}" got no answer from ${where} within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      const retry = this.scheduler.setInterval(() => this.send(requestId), this.options.retryIntervalMs);
      this.pending.set(requestId, {
        request,
        coordinator: target,
        lastTarget: undefined,
        typeName: request.typeName,
        answerType: ANSWER_TYPE[request.type],
        resolve: resolve as (answer: CoordinatorAnswer) => void,
        reject,
        timer,
        retry,
        resends: [],
      });
      this.send(requestId);
    });
  }

  /**
   * The membership changed: a request whose coordinator is now unreachable fails at once; one whose
   * coordinator moved is sent to the new one now and a few times soon after (MOVED_RESEND_DELAYS_MS).
   */
  coordinatorChanged(): void {
    for (const [requestId, pending] of [...this.pending]) {
      const now = pending.coordinator();
      if (now !== undefined && !now.reachable) {
        this.forget(requestId);
        pending.reject(unreachable(pending.request, now.key));
        continue;
      }
      if (now === undefined || now.key === pending.lastTarget) continue;
      for (const resend of pending.resends) resend.cancel();
      pending.resends = MOVED_RESEND_DELAYS_MS.filter((delay) => delay < this.options.retryIntervalMs).map((delay) =>
        this.scheduler.setTimeout(() => this.send(requestId), delay),
      );
      this.send(requestId);
    }
  }

  private send(requestId: number): void {
    const pending = this.pending.get(requestId);
    const to = pending?.coordinator();
    if (pending === undefined || to === undefined) return;
    pending.lastTarget = to.key;
    this.options.send(to.key, pending.request);
  }

  /** Settles the request this answers; an answer nobody waits for (late, duplicated, mismatched) is ignored. */
  onAnswer(answer: CoordinatorAnswer): void {
    const pending = this.pending.get(answer.requestId);
    if (pending === undefined || pending.answerType !== answer.type || pending.typeName !== answer.typeName) return;
    this.forget(answer.requestId);
    pending.resolve(answer);
  }

  /** Rejects every waiting request with `error` (the node is shutting down). */
  failAll(error: Error): void {
    const requests = [...this.pending.keys()];
    for (const requestId of requests) {
      const pending = this.pending.get(requestId);
      this.forget(requestId);
      pending?.reject(error);
    }
  }

  private forget(requestId: number): boolean {
    const pending = this.pending.get(requestId);
    if (pending === undefined) return false;
    this.pending.delete(requestId);
    pending.timer.cancel();
    pending.retry.cancel();
    for (const resend of pending.resends) resend.cancel();
    return true;
  }
}

function unreachable(request: CoordinatorRequest, key: string): ActorTsError {
  return new ActorTsError(
    'coordinator_unreachable',
    `${request.type} for "${request.typeName}" not sent: the coordinator's node ${key} is unreachable (it answers again once reachable, or a new coordinator takes over once it is downed)`,
  );
}
