// Operator requests to the coordinator: shard locations, moving named shards now (RebalanceNow, answered
// once per request id however often it is re-sent), a rebalance round on demand, and explain and dry runs
// (answered by coordinator/insight.ts). Each waits until the coordinator is warm, since its answer needs the
// full map.
import type { Logger } from '../../logging.js';
import type { ShardingMessage } from '../protocol/messages.js';
import type { InsightRequest } from '../protocol/insight-messages.js';
import { AnswerCache } from './answer-cache.js';
import type { CoordinatorState } from './state.js';

/** How many RebalanceNow answers are kept for repeated requests. */
const REMEMBERED_ANSWERS = 256;

export interface OperatorRequestsOptions {
  readonly typeName: string;
  readonly numberOfShards: number;
  readonly state: CoordinatorState;
  readonly logger: Logger;
  readonly send: (to: string, message: ShardingMessage) => void;
  /** Runs the action once the coordinator is warm (at once if it is). */
  readonly whenWarm: (action: () => void) => void;
  /** Starts a hand-off of a shard that has a home. */
  readonly handOff: (shardId: number) => void;
  readonly rebalanceRound: () => void;
  /** The answer to an explain or dry-run request (changes nothing). */
  readonly insight: (request: InsightRequest) => ShardingMessage;
}

/** How RebalanceNow sorts the shards it is asked to move. */
export interface RebalanceNowVerdict {
  /** Moving now (or already moving). */
  readonly accepted: number[];
  /** Not a shard id of this type. */
  readonly unknown: number[];
  /** No home to move from. */
  readonly homeless: number[];
  /** The accepted shards that need a new hand-off. */
  readonly toHandOff: number[];
}

/** Sorts the requested shard ids (each once, in request order); pure. */
export function judgeRebalanceNow(
  shardIds: ReadonlyArray<number>,
  numberOfShards: number,
  state: Pick<CoordinatorState, 'isHandingOff' | 'homeOf'>,
): RebalanceNowVerdict {
  const verdict: RebalanceNowVerdict = { accepted: [], unknown: [], homeless: [], toHandOff: [] };
  for (const shardId of new Set(shardIds)) {
    if (!Number.isInteger(shardId) || shardId < 0 || shardId >= numberOfShards) verdict.unknown.push(shardId);
    else if (state.isHandingOff(shardId)) verdict.accepted.push(shardId);
    else if (state.homeOf(shardId) === undefined) verdict.homeless.push(shardId);
    else {
      verdict.toHandOff.push(shardId);
      verdict.accepted.push(shardId);
    }
  }
  return verdict;
}

export class OperatorRequests {
  private readonly answers = new AnswerCache<ShardingMessage>(REMEMBERED_ANSWERS);

  constructor(private readonly options: OperatorRequestsOptions) {}

  getShardLocations(from: string, requestId: number): void {
    const { whenWarm, send, typeName, state } = this.options;
    whenWarm(() =>
      send(from, {
        type: 'ShardLocations',
        typeName,
        requestId,
        regions: state.locations(),
        handingOff: state.handingOff(),
      }),
    );
  }

  rebalanceNow(from: string, requestId: number, shardIds: ReadonlyArray<number>): void {
    this.options.whenWarm(() => this.answerRebalanceNow(from, requestId, shardIds));
  }

  requestRebalance(from: string, requestId: number): void {
    const { whenWarm, send, typeName, rebalanceRound } = this.options;
    whenWarm(() => {
      rebalanceRound();
      send(from, { type: 'RebalanceRequested', typeName, requestId });
    });
  }

  insight(from: string, request: InsightRequest): void {
    const { whenWarm, send, insight } = this.options;
    whenWarm(() => send(from, insight(request)));
  }

  private answerRebalanceNow(from: string, requestId: number, shardIds: ReadonlyArray<number>): void {
    const { send, typeName, numberOfShards, state, logger, handOff } = this.options;
    // A requester re-sends until answered; a repeat whose answer was lost must not move the shards again.
    const earlier = this.answers.get(from, requestId);
    if (earlier !== undefined) {
      send(from, earlier);
      return;
    }
    const { accepted, unknown, homeless, toHandOff } = judgeRebalanceNow(shardIds, numberOfShards, state);
    for (const shardId of toHandOff) handOff(shardId);
    logger.info({ accepted, unknown, homeless, from }, 'manual rebalance');
    const answer: ShardingMessage = { type: 'RebalanceNowResult', typeName, requestId, accepted, unknown, homeless };
    this.answers.remember(from, requestId, answer);
    send(from, answer);
  }
}
