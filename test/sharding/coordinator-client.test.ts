// The coordinator client on its own: a request is re-sent every retry interval to wherever the coordinator
// runs by then, settles on its own answer only, and ends by timeout or shutdown.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { CoordinatorClient, type CoordinatorTarget } from '../../src/sharding/coordinator-client.js';
import type { ShardingMessage } from '../../src/sharding/protocol/messages.js';

const A = 'sys@127.0.0.1:1';
const B = 'sys@127.0.0.1:2';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function client(): { client: CoordinatorClient; sent: Array<[string, ShardingMessage]> } {
  const sent: Array<[string, ShardingMessage]> = [];
  return {
    client: new CoordinatorClient({
      send: (to, message) => void sent.push([to, message]),
      requestTimeoutMs: 1_000,
      retryIntervalMs: 100,
    }),
    sent,
  };
}

describe('CoordinatorClient', () => {
  it('retries every interval to the current coordinator until answered, then stops', async () => {
    const { client: c, sent } = client();
    let coordinator: string | undefined;
    const answer = c.request({ type: 'RequestRebalance', typeName: 'T' }, () => coordinator);
    expect(sent).toEqual([]); // no coordinator yet: nothing to send to
    coordinator = A;
    await vi.advanceTimersByTimeAsync(100);
    coordinator = B;
    await vi.advanceTimersByTimeAsync(200);
    expect(sent.map(([to]) => to)).toEqual([A, B, B]);
    const request = sent[0]?.[1];
    if (request?.type !== 'RequestRebalance') throw new Error('expected a RequestRebalance');
    expect(
      sent.every(([, message]) => message.type === 'RequestRebalance' && message.requestId === request.requestId),
    ).toBe(true);

    c.onAnswer({ type: 'RebalanceRequested', typeName: 'T', requestId: request.requestId });
    await expect(answer).resolves.toMatchObject({ type: 'RebalanceRequested', requestId: request.requestId });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sent).toHaveLength(3);
  });

  it('ignores answers of another type, type name or request', async () => {
    const { client: c, sent } = client();
    const answer = c.request({ type: 'GetShardLocations', typeName: 'T' }, () => A);
    const sentRequest = sent[0]?.[1];
    if (sentRequest?.type !== 'GetShardLocations') throw new Error('expected a GetShardLocations');
    const requestId = sentRequest.requestId;
    let settled = false;
    void answer.then(
      () => (settled = true),
      () => (settled = true),
    );
    c.onAnswer({ type: 'RebalanceRequested', typeName: 'T', requestId });
    c.onAnswer({ type: 'ShardLocations', typeName: 'Other', requestId, regions: [], handingOff: [] });
    c.onAnswer({ type: 'ShardLocations', typeName: 'T', requestId: requestId + 1, regions: [], handingOff: [] });
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    c.onAnswer({
      type: 'ShardLocations',
      typeName: 'T',
      requestId,
      regions: [{ address: A, shards: [1] }],
      handingOff: [],
    });
    await expect(answer).resolves.toMatchObject({ regions: [{ address: A, shards: [1] }] });
  });

  it('times out naming the request and where it went, and sends nothing more', async () => {
    const { client: c, sent } = client();
    const outcome = c
      .request({ type: 'RebalanceNow', typeName: 'T', shardIds: [1] }, () => A)
      .catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await outcome).toMatchObject({
      code: 'timeout',
      message: expect.stringContaining(`RebalanceNow for "T" got no answer from ${A}`),
    });
    const count = sent.length;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sent).toHaveLength(count);
  });

  it('fails every waiting request at shutdown and leaves no timer behind', async () => {
    const { client: c } = client();
    const requests = [
      c.request({ type: 'RequestRebalance', typeName: 'T' }, () => A),
      c.request({ type: 'GetShardLocations', typeName: 'T' }, () => A),
    ];
    const stopping = new ActorTsError('not_running', 'shut down');
    c.failAll(stopping);
    for (const request of requests) await expect(request).rejects.toBe(stopping);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('re-sends at once when the coordinator moves instead of waiting for the next retry', async () => {
    const sent: Array<[string, ShardingMessage]> = [];
    const c = new CoordinatorClient({
      send: (to, message) => void sent.push([to, message]),
      requestTimeoutMs: 10_000,
      retryIntervalMs: 2_000,
    });
    let coordinator: CoordinatorTarget = { key: A, reachable: true };
    void c.request({ type: 'GetShardLocations', typeName: 'T' }, () => coordinator).catch(() => undefined);
    expect(sent.map(([to]) => to)).toEqual([A]);
    coordinator = { key: B, reachable: true };
    c.coordinatorChanged();
    // Now, and a few times soon after for a new coordinator that learns of its role a moment later.
    expect(sent.map(([to]) => to)).toEqual([A, B]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sent.length).toBeGreaterThanOrEqual(4);
    expect(sent.slice(1).every(([to]) => to === B)).toBe(true);
    // A change that leaves the coordinator where it was sends nothing extra.
    const before = sent.length;
    c.coordinatorChanged();
    expect(sent).toHaveLength(before);
    c.failAll(new ActorTsError('not_running', 'done'));
    expect(vi.getTimerCount()).toBe(0);
  });

  it('fails fast with coordinator_unreachable while the coordinator node is unreachable, at the start or later', async () => {
    const { client: c, sent } = client();
    let coordinator: CoordinatorTarget = { key: A, reachable: false };
    await expect(c.request({ type: 'GetShardLocations', typeName: 'T' }, () => coordinator)).rejects.toMatchObject({
      code: 'coordinator_unreachable',
      message: expect.stringContaining(A),
    });
    expect(sent).toEqual([]);

    coordinator = { key: A, reachable: true };
    const waiting = c
      .request({ type: 'GetShardLocations', typeName: 'T' }, () => coordinator)
      .catch((error: unknown) => error);
    coordinator = { key: A, reachable: false };
    c.coordinatorChanged();
    expect(await waiting).toBeInstanceOf(ActorTsError);
    expect(await waiting).toMatchObject({ code: 'coordinator_unreachable' });
    expect(vi.getTimerCount()).toBe(0);
  });
});
