// Operator requests to a type's coordinator (shard locations, rebalance now, a rebalance round, explain, dry runs), from any
// node: each is re-sent every retry interval to wherever the coordinator runs by then, until its answer
// arrives or the request times out. Answers are matched by request id, type name and answer type.
import { ActorTsError } from '../../errors.js';
import type { MessageRoutedTo, RegionLocation, ShardingMessage } from '../protocol/messages.js';

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
  /** Shards without a home: nothing to move; their next message allocates them through the strategy. */
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
export type CoordinatorRequestBody = CoordinatorRequest extends infer R ? (R extends CoordinatorRequest ? Omit<R, 'requestId'> : never) : never;
/** Every message routed to the requester is an answer to one of the requests above. */
export type CoordinatorAnswer = MessageRoutedTo<'requester'>;
export type AnswerTo<T extends CoordinatorRequestType> = Extract<CoordinatorAnswer, { readonly type: (typeof ANSWER_TYPE)[T] }>;

export interface CoordinatorClientOptions {
  /** Sends to a node (a `system@host:port` key); never throws. */
  readonly send: (to: string, message: ShardingMessage) => void;
  readonly requestTimeoutMs: number;
  readonly retryIntervalMs: number;
}

interface PendingRequest {
  readonly typeName: string;
  readonly answerType: CoordinatorAnswer['type'];
  readonly resolve: (answer: CoordinatorAnswer) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
  readonly retry: NodeJS.Timeout;
}

export class CoordinatorClient {
  private readonly pending = new Map<number, PendingRequest>();
  private nextId = 1;

  constructor(private readonly options: CoordinatorClientOptions) {}

  /**
   * Sends `body` to the coordinator `coordinator()` names at each attempt (none while it names nobody) and
   * resolves with the answer; rejects with `timeout` after `requestTimeoutMs`.
   */
  request<B extends CoordinatorRequestBody>(body: B, coordinator: () => string | undefined): Promise<AnswerTo<B['type']>> {
    const requestId = this.nextId++;
    const request = { ...body, requestId } as CoordinatorRequest;
    const sendIt = (): void => {
      const to = coordinator();
      if (to !== undefined) this.options.send(to, request);
    };
    return new Promise<AnswerTo<B['type']>>((resolve, reject) => {
      const timeoutMs = this.options.requestTimeoutMs;
      const timer = setTimeout(() => {
        if (!this.forget(requestId)) return;
        const where = coordinator() ?? 'no coordinator (no Up member)';
        reject(new ActorTsError('timeout', `${request.type} for "${request.typeName}" got no answer from ${where} within ${timeoutMs} ms`));
      }, timeoutMs);
      const retry = setInterval(sendIt, this.options.retryIntervalMs);
      this.pending.set(requestId, {
        typeName: request.typeName,
        answerType: ANSWER_TYPE[request.type],
        resolve: resolve as (answer: CoordinatorAnswer) => void,
        reject,
        timer,
        retry,
      });
      sendIt();
    });
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
    clearTimeout(pending.timer);
    clearInterval(pending.retry);
    return true;
  }
}
