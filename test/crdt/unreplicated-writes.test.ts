// The replication lag gauge's source: the age of the oldest own write some peer's state vector does not
// cover yet, forgotten once every peer shows it. Real stores, a fake clock.
import { describe, expect, it } from 'vitest';
import { EMPTY_STATE_VECTOR } from '../../crdt/wire.js';
import { PlacementStore } from '../../crdt/index.js';
import { UnreplicatedWrites } from '../../crdt/unreplicated-writes.js';

describe('UnreplicatedWrites', () => {
  it('ages the oldest write until every peer covers it, then forgets it', () => {
    let now = 1_000;
    const a = new PlacementStore({ node: 'a', now: () => now });
    const b = new PlacementStore({ node: 'b', now: () => now });
    const c = new PlacementStore({ node: 'c', now: () => now });
    const lag = new UnreplicatedWrites(() => now);
    expect(lag.oldestAgeMs([b.encodeStateVector(), c.encodeStateVector()])).toBeNull();

    a.set('T', 1, 'x');
    lag.note(a.encodeStateVector());
    now += 500;
    a.set('T', 2, 'x');
    lag.note(a.encodeStateVector());
    now += 500;
    expect(lag.oldestAgeMs([b.encodeStateVector(), c.encodeStateVector()])).toBe(1_000);
    // A peer that never sent its vector holds none of them.
    expect(lag.oldestAgeMs([b.encodeStateVector(), undefined])).toBe(1_000);

    // b gets both writes, c none yet: both are still unreplicated, the oldest 1 s old.
    b.applyUpdate(a.encodeDiff(EMPTY_STATE_VECTOR));
    expect(lag.oldestAgeMs([b.encodeStateVector(), c.encodeStateVector()])).toBe(1_000);
    c.applyUpdate(a.encodeDiff(EMPTY_STATE_VECTOR));
    expect(lag.oldestAgeMs([b.encodeStateVector(), c.encodeStateVector()])).toBeNull();
    // Forgotten: a later check with a lagging peer does not bring them back.
    expect(lag.oldestAgeMs([new PlacementStore({ node: 'd' }).encodeStateVector()])).toBeNull();
  });

  it('with no peer nothing is unreplicated', () => {
    const lag = new UnreplicatedWrites(() => 0);
    lag.note(new Uint8Array([0, 0]));
    expect(lag.oldestAgeMs([])).toBeNull();
  });
});
