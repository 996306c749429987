// Operator requests alone: how RebalanceNow sorts shard ids, its answers remembered per request id (a
// re-sent request moves nothing twice), the bounded answer cache, and (through the coordinator) waiting
// for the warm-up.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logging.js';
import { NodeAddress } from '../../src/cluster/address.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/index.js';
import { Effects } from '../../src/sharding/coordinator/effects.js';
import {
  AnswerCache,
  CoordinatorCordons,
  OperatorRequests,
  judgeRebalanceNow,
} from '../../src/sharding/coordinator/operator-requests.js';
import { ShardCoordinator } from '../../src/sharding/coordinator/shard-coordinator.js';
import { NO_CORDONS } from '../../src/sharding/placements/cordon-view.js';
import { FakeContext, address, member, registration, startHandOff, stateWith, type Sent } from './coordinator-fakes.js';

const A = address(1);
const B = address(2);

describe('judgeRebalanceNow', () => {
  it('sorts ids into accepted, unknown and unallocated, each once, and hands off only what is not moving yet', () => {
    const state = stateWith(
      [A],
      [
        [1, A],
        [2, A],
      ],
    );
    startHandOff(state, 2, A);
    const verdict = judgeRebalanceNow([1, 2, 3, 1, 10, -1, 1.5], 10, state);
    expect(verdict).toEqual({ accepted: [1, 2], unknown: [10, -1, 1.5], unallocated: [3], toHandOff: [1] });
  });
});

describe('AnswerCache', () => {
  it('keeps answers by requester and request id, forgetting the oldest beyond its capacity', () => {
    const cache = new AnswerCache<string>(2);
    cache.remember(A, 1, 'one');
    cache.remember(A, 2, 'two');
    cache.remember(address(2), 1, 'other');
    expect(cache.size).toBe(2);
    expect(cache.get(A, 1)).toBeUndefined();
    expect(cache.get(A, 2)).toBe('two');
    expect(cache.get(address(2), 1)).toBe('other');
    expect(() => new AnswerCache(0)).toThrow(RangeError);
  });
});

describe('OperatorRequests', () => {
  it('answers a re-sent RebalanceNow with the first answer and moves nothing again', () => {
    const state = stateWith([A], [[4, A]]);
    const handedOff: number[] = [];
    const subject = new OperatorRequests({
      typeName: 'T',
      numberOfShards: 8,
      strategy: new LeastShardAllocationStrategy(),
      logger: silentLogger(),
      cordons: new CoordinatorCordons(NO_CORDONS, () => 0),
      handOffs: { begin: (_fx, shardId) => handedOff.push(shardId) },
      allocator: { candidates: () => [NodeAddress.parse(A)] },
    });
    const fx = new Effects(state);
    const sent: Sent[] = fx.sends;
    subject.rebalanceNow(fx, A, 7, [4, 5, 9]);
    subject.rebalanceNow(fx, A, 7, [4, 5, 9]);
    const answer = {
      type: 'RebalanceNowResult',
      typeName: 'T',
      requestId: 7,
      accepted: [4],
      unknown: [9],
      homeless: [5],
    };
    expect(sent).toEqual([
      { to: A, message: answer },
      { to: A, message: answer },
    ]);
    expect(handedOff).toEqual([4]);
    subject.rebalanceNow(fx, A, 8, [4]);
    expect(handedOff).toEqual([4, 4]);
  });
});

describe('operator requests through the coordinator', () => {
  /**
   * A coordinator (8 shards) whose region A hosts shard 4, not warm until B registers (as a proxy: A stays
   * the only candidate). `becomeWarm` registers B.
   */
  function requests() {
    const ctx = new FakeContext([member(1), member(2)], { coordinatorWarmupMs: 500, rebalanceIntervalMs: 1e9 });
    const subject = new ShardCoordinator(
      { typeName: 'T', numberOfShards: 8, role: undefined, strategy: new LeastShardAllocationStrategy() },
      ctx,
      silentLogger(),
    );
    subject.start();
    subject.handle(A, registration([4]));
    ctx.take();
    const becomeWarm = (): void => subject.handle(B, { ...registration(), proxy: true });
    // Only the answers to operator requests (not the registration's acknowledgements).
    const sent = (): Sent[] => ctx.take().filter(({ message }) => message.type !== 'RegisterAck');
    return { subject, sent, becomeWarm, rounds: () => subject.stats().rebalanceRounds };
  }

  it('holds every request until warm, then answers it with the map as it is then', () => {
    const { subject, sent, becomeWarm, rounds } = requests();
    subject.handle(A, { type: 'GetShardLocations', typeName: 'T', requestId: 1 });
    subject.handle(A, { type: 'RequestRebalance', typeName: 'T', requestId: 2 });
    expect(sent()).toEqual([]);
    becomeWarm();
    expect(rounds()).toBe(1);
    expect(sent()).toEqual([
      {
        to: A,
        message: {
          type: 'ShardLocations',
          typeName: 'T',
          requestId: 1,
          regions: [{ address: A, shards: [4] }],
          handingOff: [],
        },
      },
      { to: A, message: { type: 'RebalanceRequested', typeName: 'T', requestId: 2 } },
    ]);
  });

  it('answers explain and dry runs once warm, from the map, starting no hand-off and no round', () => {
    const { subject, sent, becomeWarm, rounds } = requests();
    subject.handle(A, { type: 'ExplainShard', typeName: 'T', requestId: 3, shardId: 4 });
    subject.handle(A, { type: 'DryRunRebalance', typeName: 'T', requestId: 4, shardIds: [4, 5] });
    subject.handle(A, { type: 'ExplainShard', typeName: 'T', requestId: 5, shardId: 8 });
    expect(sent()).toEqual([]);
    becomeWarm();
    expect(sent().map(({ message }) => message)).toEqual([
      {
        type: 'ShardExplained',
        typeName: 'T',
        requestId: 3,
        explanation: expect.objectContaining({
          shardId: 4,
          home: A,
          decision: 'fallback',
          placement: null,
          handingOff: false,
        }),
      },
      {
        type: 'DryRunAnswer',
        typeName: 'T',
        requestId: 4,
        moves: [{ shardId: 4, from: A, to: A }],
        warnings: [{ shardId: 5, message: 'shard 5 has no home yet: nothing to move; its first message allocates it' }],
      },
      { type: 'ShardExplained', typeName: 'T', requestId: 5, explanation: null },
    ]);
    expect(subject.stats().handOffsStarted).toBe(0);
    expect(rounds()).toBe(0);
  });
});
