// Issue 27 case 4: applying a large update yields to the event loop. A received frame above yieldAboveBytes
// is handled in a later macrotask, frames behind it keep their order, and small frames alone stay immediate.
import { describe, expect, it } from 'vitest';
import { PlacementReplicator, PlacementStore, encodeSyncFrame } from '../../crdt/index.js';
import { FrameInbox } from '../../crdt/frame-inbox.js';
import { ManualTimers } from './helpers.js';

function manualDefer() {
  const tasks: Array<() => void> = [];
  return {
    defer: (run: () => void) => void tasks.push(run),
    runOne: () => tasks.shift()?.(),
    get pending() {
      return tasks.length;
    },
  };
}

describe('FrameInbox', () => {
  it('runs small frames at once, a large one in a later turn, and keeps the order of what queued behind it', () => {
    const turns = manualDefer();
    const inbox = new FrameInbox(100, turns.defer);
    const ran: string[] = [];
    inbox.add(10, () => ran.push('small-1'));
    expect(ran).toEqual(['small-1']);
    inbox.add(500, () => ran.push('large'));
    inbox.add(10, () => ran.push('small-2'));
    inbox.add(500, () => ran.push('large-2'));
    expect(ran).toEqual(['small-1']);
    turns.runOne();
    // One large frame per turn; the small one behind it rides along only when budget remains.
    expect(ran).toEqual(['small-1', 'large']);
    turns.runOne();
    expect(ran).toEqual(['small-1', 'large', 'small-2']);
    turns.runOne();
    expect(ran).toEqual(['small-1', 'large', 'small-2', 'large-2']);
    expect(turns.pending).toBe(0);
    inbox.add(10, () => ran.push('small-3'));
    expect(ran.at(-1)).toBe('small-3');
  });
});

describe('a replicator receiving a large update', () => {
  it('applies it in a later macrotask, not in the turn it arrived', () => {
    const source = new PlacementStore({ node: 'w' });
    source.setMany(
      'T',
      Array.from({ length: 5_000 }, (_, shardId) => ({ shardId, target: `target-${shardId % 7}` })),
    );
    const store = new PlacementStore({ node: 'r' });
    const turns = manualDefer();
    const timers = new ManualTimers();
    const replicator = new PlacementReplicator(
      store,
      { send: () => undefined },
      {
        setInterval: timers.setInterval,
        clearInterval: timers.clearInterval,
        yieldAboveBytes: 10_000,
        defer: turns.defer,
      },
    );
    const frame = encodeSyncFrame({
      kind: 'update',
      update: source.encodeDiff(new PlacementStore({ node: 'x' }).encodeStateVector()),
    });
    expect(frame.length).toBeGreaterThan(10_000);
    replicator.receive('w', frame);
    expect(store.snapshot('T').placements.size).toBe(0);
    turns.runOne();
    expect(store.snapshot('T').placements.size).toBe(5_000);
    replicator.close();
  });
});
