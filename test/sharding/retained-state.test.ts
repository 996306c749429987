// The old host's copy of a hand-off's state (region/retained-states.ts) and the coordinator's answers to it:
// kept until released, bounded, sent again under a later HandOff's id; a coordinator releases a copy whose
// shard has a home, waits while the shard moves or its state is in transit, and asks for a copy whose shard
// has neither (the state it would have held was lost with a former coordinator). A region's word is taken
// only from a registered region, a shard claimed by a registration during that ask is not allocated again, and a
// HostShard with the state ahead of it is sent again only after a whole retry interval unanswered.
import { describe, expect, it } from 'vitest';
import { RetainedStates } from '../../src/sharding/region/retained-states.js';
import type { ShardingMessage } from '../../src/sharding/protocol/messages.js';
import { address, member, registration, startedCoordinator, type Sent } from './coordinator-fakes.js';

type Chunk = Extract<ShardingMessage, { type: 'ShardStateChunk' }>;

function chunk(shardId: number, handOffId: number, bytes: number, part = 0, parts = 1): Chunk {
  const entities = [{ entityId: `e${part}`, state: new Uint8Array(bytes) }];
  return { type: 'ShardStateChunk', typeName: 'T', shardId, handOffId, part, parts, entities };
}

/** A chunk as a protocol-9 old host streams it: no count, the final one saying `last`. */
function streamed(shardId: number, handOffId: number, part: number, last = false): Chunk {
  const { parts: _parts, ...rest } = chunk(shardId, handOffId, 10, part);
  return last ? { ...rest, last } : rest;
}

describe('RetainedStates', () => {
  it('keeps a stop’s chunks until released under the same id, and sends them again relabelled', () => {
    const kept = new RetainedStates(1_000);
    kept.keep(1, 10, [chunk(1, 10, 100, 0, 2), chunk(1, 10, 50, 1, 2)]);
    expect(kept.bytes).toBe(150);
    expect(kept.list()).toEqual([{ shardId: 1, handOffId: 10 }]);
    expect(kept.released(1, 9)).toBe(false);
    const again = kept.reship(1, 11);
    expect(again.map((c) => [c.handOffId, c.part])).toEqual([
      [11, 0],
      [11, 1],
    ]);
    // The copy is now the one shipped under 11: a late release of 10 leaves it.
    expect(kept.released(1, 10)).toBe(false);
    expect(kept.released(1, 11)).toBe(true);
    expect([kept.size, kept.bytes]).toEqual([0, 0]);
    expect(kept.reship(1, 12)).toEqual([]);
  });

  it('sends a streamed copy again with its count on every chunk, for a coordinator of any version', () => {
    const kept = new RetainedStates(1_000);
    kept.keep(1, 10, [streamed(1, 10, 0), streamed(1, 10, 1), streamed(1, 10, 2, true)]);
    expect(kept.reship(1, 11).map((c) => [c.part, c.parts, c.last])).toEqual([
      [0, 3, undefined],
      [1, 3, undefined],
      [2, 3, true],
    ]);
  });

  it('keeps nothing for a stop without state, and a later stop of the shard replaces its copy', () => {
    const kept = new RetainedStates(1_000);
    kept.keep(1, 10, []);
    expect(kept.size).toBe(0);
    kept.keep(2, 10, [chunk(2, 10, 100)]);
    kept.keep(2, 20, [chunk(2, 20, 30)]);
    expect([kept.list(), kept.bytes]).toEqual([[{ shardId: 2, handOffId: 20 }], 30]);
  });

  it('drops the oldest copies over its bound, and says which', () => {
    const dropped: number[] = [];
    const kept = new RetainedStates(250, (shardId) => dropped.push(shardId));
    kept.keep(1, 1, [chunk(1, 1, 100)]);
    kept.keep(2, 2, [chunk(2, 2, 100)]);
    kept.keep(3, 3, [chunk(3, 3, 100)]);
    expect(dropped).toEqual([1]);
    expect(kept.list().map((r) => r.shardId)).toEqual([2, 3]);
    expect(kept.bytes).toBe(200);
  });

  it('names a copy to the coordinator again every other tick while it is kept', () => {
    const kept = new RetainedStates(1_000);
    kept.keep(1, 10, [chunk(1, 10, 1)]);
    const ticks = Array.from({ length: 5 }, () => kept.overdue().length);
    expect(ticks).toEqual([0, 1, 0, 1, 0]);
    kept.drop(1);
    expect(kept.overdue()).toEqual([]);
  });
});

describe('the coordinator and a kept state, relayed (regions before protocol 10)', () => {
  const [B, C] = [address(2), address(3)];

  function coordinator() {
    const started = startedCoordinator([member(1), member(2), member(3)], {
      retryIntervalMs: 100_000,
      coordinatorWarmupMs: 500,
      rebalanceIntervalMs: 1_000_000,
    });
    started.ctx.protocol = 9;
    const sent = (type: ShardingMessage['type']) => started.ctx.take().filter((s) => s.message.type === type);
    return { ...started, sent };
  }

  /** B registers keeping shard 4's state; the HandOff it is asked with. */
  function askedForKeptState(started: ReturnType<typeof coordinator>): number {
    started.subject.handle(B, registration([], { retained: [{ shardId: 4, handOffId: 77 }] }));
    const [ask] = started.sent('HandOff');
    expect(ask?.to).toBe(B);
    if (ask?.message.type !== 'HandOff') throw new Error('no HandOff');
    return ask.message.handOffId;
  }

  /** B answers the HandOff with the kept chunk and ShardStopped; what the coordinator sent then, and to whom. */
  function keptStateSent(started: ReturnType<typeof coordinator>, handOffId: number): { hosted: Sent[]; to: string } {
    started.subject.handle(B, { ...chunk(4, handOffId, 10), typeName: 'T' });
    started.subject.handle(B, { type: 'ShardStopped', typeName: 'T', shardId: 4, handOffId });
    const hosted = started.ctx.take();
    const to = hosted.find((s) => s.message.type === 'HostShard')?.to;
    if (to === undefined) throw new Error('no HostShard');
    return { hosted, to };
  }

  it('asks a registering region for a state whose shard has no home, and allocates the shard once it is here', () => {
    const started = coordinator();
    const { subject, sent, ctx } = started;
    const handOffId = askedForKeptState(started);
    // Until the state is here the shard is not allocated: a request for it waits.
    subject.handle(C, { type: 'GetShardHome', typeName: 'T', shardId: 4 });
    expect(ctx.take().filter((s) => s.message.type === 'HostShard')).toEqual([]);
    const { hosted, to } = keptStateSent(started, handOffId);
    // The state goes to the new home ahead of its HostShard; its start releases B's copy.
    const types = hosted.filter((s) => s.to === to).map((s) => s.message.type);
    expect(types.indexOf('RestoreShardState')).toBeLessThan(types.indexOf('HostShard'));
    subject.handle(to, { type: 'ShardStarted', typeName: 'T', shardId: 4 });
    expect(sent('ShardStateReleased')).toEqual([
      { to: B, message: { type: 'ShardStateReleased', typeName: 'T', shardId: 4, handOffId } },
    ]);
  });

  it('sends a HostShard, and the state ahead of it, again only once it went a whole retry interval unanswered', () => {
    const started = coordinator();
    const { to } = keptStateSent(started, askedForKeptState(started));
    const resent = (): string[] =>
      started.ctx
        .take()
        .filter((s) => s.to === to && (s.message.type === 'HostShard' || s.message.type === 'RestoreShardState'))
        .map((s) => s.message.type);
    // The first tick may come right after the HostShard: it waits.
    started.scheduler.advance(100_000);
    expect(resent()).toEqual([]);
    started.scheduler.advance(100_000);
    expect(resent()).toEqual(['RestoreShardState', 'HostShard']);
  });

  it('releases a copy whose shard has a home, and ignores one in transit, moving, or from no region', () => {
    const { subject, sent, ctx } = coordinator();
    subject.handle(C, registration([5]));
    ctx.take();
    subject.handle(B, { type: 'ShardStateHeld', typeName: 'T', shardId: 5, handOffId: 3 });
    expect(sent('ShardStateReleased')).toEqual([
      { to: B, message: { type: 'ShardStateReleased', typeName: 'T', shardId: 5, handOffId: 3 } },
    ]);
    // Not a member's region: its word about a kept state changes nothing.
    subject.handle(address(9), { type: 'ShardStateHeld', typeName: 'T', shardId: 6, handOffId: 3 });
    expect(ctx.take()).toEqual([]);
    // Moving: the hand-off's own end decides.
    subject.handle(B, { type: 'ShardStateHeld', typeName: 'T', shardId: 6, handOffId: 3 });
    expect(sent('HandOff')).toHaveLength(1);
    subject.handle(B, { type: 'ShardStateHeld', typeName: 'T', shardId: 6, handOffId: 3 });
    expect(ctx.take()).toEqual([]);
    // Out of range: ignored.
    subject.handle(B, { type: 'ShardStateHeld', typeName: 'T', shardId: 10, handOffId: 3 });
    expect(ctx.take()).toEqual([]);
  });

  it('a shard claimed by a registration while its state is asked for keeps that home and is not allocated again', () => {
    const { subject, sent, ctx } = coordinator();
    subject.handle(B, { type: 'ShardStateHeld', typeName: 'T', shardId: 7, handOffId: 3 });
    const [ask] = sent('HandOff');
    if (ask?.message.type !== 'HandOff') throw new Error('no HandOff');
    // C started the shard from the former coordinator's HostShard and says so now.
    subject.handle(C, registration([7]));
    subject.handle(B, { ...chunk(7, ask.message.handOffId, 10), typeName: 'T' });
    subject.handle(B, { type: 'ShardStopped', typeName: 'T', shardId: 7, handOffId: ask.message.handOffId });
    const after = ctx.take();
    expect(after.filter((s) => s.message.type === 'HostShard')).toEqual([]);
    expect(after.filter((s) => s.message.type === 'ShardHome').map((s) => s.message)).toContainEqual({
      type: 'ShardHome',
      typeName: 'T',
      shardId: 7,
      region: C,
    });
    expect(subject.locations().find((l) => l.address === C)?.shards).toEqual([7]);
    // The state that came with the stop is not needed: B's copy is released.
    expect(after.filter((s) => s.message.type === 'ShardStateReleased').map((s) => s.to)).toEqual([B]);
  });

  /** B stops shard 4 for `handOffId`, its chunks (`places`) ahead of its ShardStopped; what went to the new home. */
  function stoppedWith(started: ReturnType<typeof coordinator>, handOffId: number, chunks: Chunk[]): Sent[] {
    for (const sent of chunks) started.subject.handle(B, sent);
    started.subject.handle(B, { type: 'ShardStopped', typeName: 'T', shardId: 4, handOffId });
    return started.ctx.take();
  }

  it('takes a streamed transfer in any order, repeats counted once, and hands it on naming its count', () => {
    const started = coordinator();
    const handOffId = askedForKeptState(started);
    const arrivals = [streamed(4, handOffId, 2, true), streamed(4, handOffId, 0), streamed(4, handOffId, 0)];
    const sent = stoppedWith(started, handOffId, [...arrivals, streamed(4, handOffId, 1)]);
    const restores = sent.flatMap((s) => (s.message.type === 'RestoreShardState' ? [s.message] : []));
    // Every chunk names the count (a new home on protocol 8 needs it); the final one still says last.
    expect(restores.map((r) => [r.part, r.parts, r.last])).toEqual([
      [0, 3, undefined],
      [1, 3, undefined],
      [2, 3, true],
    ]);
    expect(started.subject.stats().handOffStateBytes).toBe(0 + 3 * (2 + 10));
  });

  it.each([
    ['a part before the last missing', [0, 2]],
    ['a part after the last (the transfer starts over from it)', [0, 1, 2, 3]],
  ] as const)('%s: the shard starts fresh, nothing relayed, the copy released', (_label, parts) => {
    const started = coordinator();
    const handOffId = askedForKeptState(started);
    const chunks = parts.map((part) => streamed(4, handOffId, part, part === 2));
    const sent = stoppedWith(started, handOffId, chunks);
    expect(sent.filter((s) => s.message.type === 'RestoreShardState')).toEqual([]);
    expect(sent.filter((s) => s.message.type === 'HostShard')).toHaveLength(1);
    expect(sent.filter((s) => s.message.type === 'ShardStateReleased').map((s) => s.to)).toEqual([B]);
    expect(started.subject.stats().handOffStateBytes).toBe(0);
  });
});
