// Operator requests to the coordinator: shard locations, moving named shards now (RebalanceNow, answered
// once per request id however often it is re-sent), a rebalance round on demand, and explain and dry runs
// (answered by coordinator/insight.ts). Each waits until the coordinator is warm, since its answer needs the
// full map.
import type { ShardingMessage } from '../protocol/messages.js';
import type { InsightRequest } from '../protocol/insight-messages.js';
import { AnswerCache } from './answer-cache.js';
import type { RequestPort, RoomBasics } from './ports.js';
import type { CoordinatorState } from './state.js';

/** How many RebalanceNow answers are kept for repeated requests. */
const REMEMBERED_ANSWERS = 256;

export interface OperatorRequestsOptions extends RoomBasics {
  readonly numberOfShards: number;
}

/** Where operator requests' calls go (wired in rooms.ts). */
export interface OperatorRequestsPort extends RequestPort {
  /** Runs one rebalance round now (ShardCoordinator's rebalanceRound). */
  rebalanceRound(): void;
  /** The answer to an explain or dry-run request, changing nothing (coordinatorInsight of insight.ts). */
  insight(request: InsightRequest): ShardingMessage;
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

  constructor(
    private readonly options: OperatorRequestsOptions,
    private readonly port: OperatorRequestsPort,
  ) {}

  getShardLocations(from: string, requestId: number): void {
    const { typeName, state } = this.options;
    this.port.whenWarm(() =>
      this.port.send(from, {
        type: 'ShardLocations',
        typeName,
        requestId,
        regions: state.locations(),
        handingOff: state.handingOff(),
      }),
    );
  }

  rebalanceNow(from: string, requestId: number, shardIds: ReadonlyArray<number>): void {
    this.port.whenWarm(() => this.answerRebalanceNow(from, requestId, shardIds));
  }

  requestRebalance(from: string, requestId: number): void {
    this.port.whenWarm(() => {
      this.port.rebalanceRound();
      this.port.send(from, { type: 'RebalanceRequested', typeName: this.options.typeName, requestId });
    });
  }

  insight(from: string, request: InsightRequest): void {
    this.port.whenWarm(() => this.port.send(from, this.port.insight(request)));
  }

  private answerRebalanceNow(from: string, requestId: number, shardIds: ReadonlyArray<number>): void {
    const { typeName, numberOfShards, state, logger } = this.options;
    // A requester re-sends until answered; a repeat whose answer was lost must not move the shards again.
    const earlier = this.answers.get(from, requestId);
    if (earlier !== undefined) {
      this.port.send(from, earlier);
      return;
    }
    const { accepted, unknown, homeless, toHandOff } = judgeRebalanceNow(shardIds, numberOfShards, state);
    for (const shardId of toHandOff) this.port.handOff(shardId, 'manual');
    logger.info({ accepted, unknown, homeless, from }, 'manual rebalance');
    const answer: ShardingMessage = { type: 'RebalanceNowResult', typeName, requestId, accepted, unknown, homeless };
    this.answers.remember(from, requestId, answer);
    this.port.send(from, answer);
  }
}
