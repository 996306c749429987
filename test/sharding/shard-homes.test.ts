// Giving shards homes: requests held by the warm-up gate (one `waiting` status in the coordinator's state),
// answered once each when it opens; a claim or an adoption answers whoever waited for the shard.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logging.js';
import { ShardHomes } from '../../src/sharding/coordinator/shard-homes.js';
import { address, stateWith, type Sent } from './coordinator-fakes.js';

const A = address(1);
const B = address(2);

function homes(options: { home?: string | undefined } = {}) {
  const state = stateWith([A, B]);
  const sent: Sent[] = [];
  let open = false;
  const subject = new ShardHomes(
    { typeName: 'T', state, logger: silentLogger() },
    {
      send: (to, message) => sent.push({ to, message }),
      broadcast: (message) => sent.push({ to: '*', message }),
      allocate: (shardId) => {
        const region = 'home' in options ? options.home : A;
        if (region !== undefined) state.apply({ type: 'ShardAllocated', shardId, region });
        return region;
      },
      gateOpen: () => open,
    },
  );
  return { state, sent, subject, openGate: () => (open = true) };
}

const shardHome = (to: string, shardId: number, region: string): Sent => ({
  to,
  message: { type: 'ShardHome', typeName: 'T', shardId, region },
});

describe('ShardHomes', () => {
  it('holds deferred requests while the gate is closed and answers each once when it opens', () => {
    const { state, sent, subject, openGate } = homes();
    subject.defer(3, A);
    subject.defer(3, B);
    expect(subject.freed(4)).toBe('deferred');
    expect(subject.isDeferred(3) && subject.isDeferred(4)).toBe(true);
    expect(state.counts.waiting).toBe(2);
    subject.flushDeferred();
    expect(sent).toEqual([]);
    openGate();
    subject.flushDeferred();
    // The requested shard answers its requesters; the freed one is announced to every region.
    expect(sent.splice(0)).toEqual([shardHome(A, 3, A), shardHome(B, 3, A), shardHome('*', 4, A)]);
    expect(subject.isDeferred(3)).toBe(false);
    expect(state.pendingStarts()).toEqual([
      [3, A],
      [4, A],
    ]);
    subject.flushDeferred();
    expect(sent).toEqual([]);
  });

  it('a shard with no home now waits with its requesters, asked again by retryWaiting', () => {
    const { state, sent, subject, openGate } = homes({ home: undefined });
    openGate();
    subject.allocateAndAnnounce(5, [A]);
    expect(state.statusOf(5)).toMatchObject({ kind: 'waiting', reason: 'no-home' });
    subject.retryWaiting();
    expect(sent).toEqual([]);
    expect(subject.waitingCount).toBe(1);
  });

  it('a claim of a waiting shard answers whoever waited; a claim of a homed shard names the home', () => {
    const { sent, subject } = homes();
    subject.defer(6, B);
    expect(subject.claim(A, 6)).toBeUndefined();
    expect(sent.splice(0)).toEqual([shardHome(B, 6, A)]);
    expect(subject.claim(B, 6)).toBe(A);
  });

  it('adopts a started shard only when the gate does not hold it', () => {
    const { state, subject } = homes();
    subject.defer(7, B);
    subject.adopt(A, 7);
    expect(state.kindOf(7)).toBe('waiting');
    subject.adopt(A, 8);
    expect(state.statusOf(8)).toEqual({ kind: 'running', region: A });
  });
});
