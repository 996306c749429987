// Giving shards homes: requests held by the warm-up gate (one `waiting` status in the coordinator's state),
// answered once each when it opens; a claim or an adoption answers whoever waited for the shard.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logging.js';
import { Effects } from '../../src/sharding/coordinator/effects.js';
import { ShardHomes } from '../../src/sharding/coordinator/allocation.js';
import type { CoordinatorState } from '../../src/sharding/coordinator/state.js';
import { address, stateWith, type Sent } from './coordinator-fakes.js';

const A = address(1);
const B = address(2);

function homes(options: { home?: string | undefined } = {}) {
  const state = stateWith([A, B]);
  let open = false;
  const gate = {
    get open(): boolean {
      return open;
    },
  };
  // Allocates to A unless told there is no home now.
  const allocator = {
    allocate: (fx: Effects, shardId: number): string | undefined => {
      const region = 'home' in options ? options.home : A;
      if (region !== undefined) fx.apply({ type: 'ShardAllocated', shardId, region });
      return region;
    },
  };
  const states = { started: () => {}, releaseSource: () => {} };
  const subject = new ShardHomes({ typeName: 'T', logger: silentLogger(), allocator, gate, states });
  // One dispatch's effects: what each call sends is recorded here.
  const fx = new Effects(state);
  const sent: Sent[] = fx.sends;
  return { state, sent, subject, fx, openGate: () => (open = true) };
}

/** True while the warm-up gate holds the shard's allocation. */
function isDeferred(state: CoordinatorState, shardId: number): boolean {
  const status = state.statusOf(shardId);
  return status?.kind === 'waiting' && status.reason === 'warm-up';
}

const shardHome = (to: string, shardId: number, region: string): Sent => ({
  to,
  message: { type: 'ShardHome', typeName: 'T', shardId, region },
});

describe('ShardHomes', () => {
  it('holds deferred requests while the gate is closed and answers each once when it opens', () => {
    const { state, sent, subject, fx, openGate } = homes();
    subject.defer(fx, 3, A);
    subject.defer(fx, 3, B);
    expect(subject.freed(fx, 4)).toBe('deferred');
    expect(isDeferred(state, 3) && isDeferred(state, 4)).toBe(true);
    expect(state.counts.waiting).toBe(2);
    subject.flushDeferred(fx);
    expect(sent).toEqual([]);
    openGate();
    subject.flushDeferred(fx);
    // The requested shard answers its requesters; the freed one is announced to every region.
    expect(sent.splice(0)).toEqual([shardHome(A, 3, A), shardHome(B, 3, A), shardHome(A, 4, A), shardHome(B, 4, A)]);
    expect(isDeferred(state, 3)).toBe(false);
    expect(state.pendingStarts()).toEqual([
      [3, A],
      [4, A],
    ]);
    subject.flushDeferred(fx);
    expect(sent).toEqual([]);
  });

  it('a shard with no home now waits with its requesters, asked again by retryWaiting', () => {
    const { state, sent, subject, fx, openGate } = homes({ home: undefined });
    openGate();
    subject.allocateAndAnnounce(fx, 5, [A]);
    expect(state.statusOf(5)).toMatchObject({ kind: 'waiting', reason: 'no-home' });
    subject.retryWaiting(fx);
    expect(sent).toEqual([]);
    expect(state.waiting('no-home')).toHaveLength(1);
  });

  it('a claim of a waiting shard answers whoever waited; a claim of a homed shard names the home', () => {
    const { sent, subject, fx } = homes();
    subject.defer(fx, 6, B);
    expect(subject.claim(fx, A, 6)).toBeUndefined();
    expect(sent.splice(0)).toEqual([shardHome(B, 6, A)]);
    expect(subject.claim(fx, B, 6)).toBe(A);
  });

  it('adopts a started shard only when the gate does not hold it', () => {
    const { state, subject, fx } = homes();
    subject.defer(fx, 7, B);
    subject.adopt(fx, A, 7);
    expect(state.kindOf(7)).toBe('waiting');
    subject.adopt(fx, A, 8);
    expect(state.statusOf(8)).toEqual({ kind: 'running', region: A });
  });
});
