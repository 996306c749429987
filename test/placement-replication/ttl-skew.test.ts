// Issue 27 case 7 (TTL): a pin's ttlMs followed the writer's clock alone, so a 1 h pin written through a node
// a day behind was expired on arrival everywhere else. It now counts from the later of the writer's clock
// and the latest timestamp its replica counts from any node.
import { describe, expect, it } from 'vitest';
import { EMPTY_STATE_VECTOR, PlacementStore } from '../../crdt/index.js';
import type { ClusterSharding } from '../../src/sharding/cluster-sharding.js';
import { ExternalAllocationController } from '../../src/sharding/api/external-allocation-controller.js';
import { isExpired, ruleOf } from '../../src/sharding/placements/placement-options.js';

const NOW = 1_780_000_000_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function controllerOn(store: PlacementStore, now: () => number): ExternalAllocationController {
  const sharding = {
    entityTypes: () => new Map([['T', { numberOfShards: 10, role: undefined }]]),
    placementStore: store,
    placementsReady: async () => undefined,
  };
  return new ExternalAllocationController(sharding as unknown as ClusterSharding, 'T', { now });
}

describe('a pin ttl written through a node whose clock is behind (issue 27 case 7)', () => {
  it('is not expired on arrival at a node with the right clock', async () => {
    const behindNow = () => NOW - DAY;
    const behind = new PlacementStore({ node: 'behind', now: behindNow });
    const sane = new PlacementStore({ node: 'sane', now: () => NOW });
    // The cluster wrote something lately: the replica behind counts a timestamp of the right time.
    sane.set('T', 9, 'app@10.0.0.1:1');
    behind.applyUpdate(sane.encodeDiff(EMPTY_STATE_VECTOR));
    const [record] = await controllerOn(behind, behindNow).setPlacements([
      { shardId: 1, target: 'app@10.0.0.2:1', ttlMs: HOUR },
    ]);
    expect(record?.expiresAt).not.toBeNull();
    sane.applyUpdate(behind.encodeDiff(sane.encodeStateVector()));
    const arrived = sane.snapshot('T').placements.get(1);
    expect(arrived?.target).toBe('app@10.0.0.2:1');
    const rule = ruleOf(arrived as NonNullable<typeof arrived>);
    expect(isExpired(rule, NOW)).toBe(false);
    expect(isExpired(rule, NOW + HOUR)).toBe(true);
  });
});
