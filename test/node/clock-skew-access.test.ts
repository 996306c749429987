// Issue 41 groundwork: a node whose ClockOffsetTracker says it is beyond maxClockOffsetMs refuses placement writes
// with clock_skew naming its offset, and accepts again once back within the bound.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { ClockOffsetTracker, skewReason } from '../../src/cluster/membership/clock-offset.js';
import type { Cluster } from '../../src/cluster/membership/cluster.js';
import type { ClusterSharding } from '../../src/sharding/cluster-sharding.js';
import { NodeManagementBackend } from '../../src/node/management-backend.js';

const self = NodeAddress.parse('app@127.0.0.1:1');
const cluster = {
  self,
  selfMember: () => ({ status: 'up' }),
  members: () => [{ address: self, status: 'up', reachable: true }],
};

function backendWith(tracker: ClockOffsetTracker, max: number): NodeManagementBackend {
  const replicator = {
    stats: () => {
      throw new Error('not read');
    },
  };
  return new NodeManagementBackend(cluster as unknown as Cluster, {} as ClusterSharding, replicator, new Map(), {
    clockSkew: () => skewReason(tracker.offsetMs(), max),
  });
}

describe('writeAccess under clock skew', () => {
  it('refuses with clock_skew naming the offset while beyond the bound, and accepts once back', () => {
    const tracker = new ClockOffsetTracker(5_000);
    const backend = backendWith(tracker, 5_000);
    expect(backend.writeAccess().writable).toBe(true);
    tracker.record({ member: 'b', sample: { offsetMs: 86_400_000, uncertaintyMs: 1 } });
    tracker.record({ member: 'c', sample: { offsetMs: 86_400_000, uncertaintyMs: 1 } });
    expect(backend.writeAccess()).toMatchObject({
      writable: false,
      code: 'clock_skew',
      reason: expect.stringContaining('86399.999 s behind'),
    });
    tracker.record({ member: 'b', sample: { offsetMs: 10, uncertaintyMs: 1 } });
    tracker.record({ member: 'c', sample: { offsetMs: 10, uncertaintyMs: 1 } });
    expect(backend.writeAccess().writable).toBe(true);
  });
});
