// The system under test: one PlacementStore per node replicated by PlacementReplication over the transport,
// read through explicitPlacementState exactly as the external allocation strategy reads it.
import { EMPTY_STATE_VECTOR, PlacementStore } from '../../crdt/index.js';
import { PlacementReplication } from '../../src/placement-replication/placement-replication.js';
import { explicitPlacementState } from '../../src/sharding/api/external-allocation-controller.js';
import { staticMembership } from '../lib/static-membership.js';
import { TYPE_NAME, type Protocol, type SimContext, type SimNode, type Stamp } from './types.js';

export const ANTI_ENTROPY_MS = 1000;
// PlacementReplication's own timer runs on wall time; the simulation drives anti-entropy itself instead, so the
// real timer is parked at the longest interval Node accepts and never fires during a run.
const PARKED_INTERVAL_MS = 2 ** 31 - 1;

export const placementStoreProtocol: Protocol = {
  id: 'store',
  label: 'placement store (ours)',
  preload(entries, now) {
    const seed = new PlacementStore({ node: 'bench-preload', now });
    for (const [shardId, target] of entries) seed.set(TYPE_NAME, shardId, target);
    // The encoded empty state vector (zero entries): the whole state.
    return seed.encodeDiff(EMPTY_STATE_VECTOR);
  },
  create(context, preloaded) {
    return new StoreNode(context, preloaded as Uint8Array | undefined);
  },
};

class StoreNode implements SimNode {
  private readonly store: PlacementStore;
  private readonly gossip: PlacementReplication;
  private readonly getState: ReturnType<typeof explicitPlacementState>;
  private closed = false;

  constructor(context: SimContext, preloaded: Uint8Array | undefined) {
    this.store = new PlacementStore({ node: context.self.toString(), now: context.now });
    if (preloaded !== undefined) this.store.applyUpdate(preloaded);
    this.getState = explicitPlacementState(() => this.store.snapshot(TYPE_NAME));
    this.gossip = new PlacementReplication(this.store, context.transport, staticMembership(context.self, context.all), {
      antiEntropyIntervalMs: PARKED_INTERVAL_MS,
    });
    context.clock.every(
      ANTI_ENTROPY_MS,
      context.random() * ANTI_ENTROPY_MS,
      () => this.gossip.antiEntropy(),
      () => !this.closed,
    );
  }

  write(shardId: number, target: string): Stamp {
    return this.store.set(TYPE_NAME, shardId, target).hlc;
  }

  read(shardId: number): string | undefined {
    return this.getState().explicitPlacements.get(shardId)?.toString();
  }

  stamp(shardId: number): Stamp | undefined {
    return this.store.snapshot(TYPE_NAME).placements.get(shardId)?.hlc;
  }

  onChange(listener: (shardIds: readonly number[]) => void): void {
    this.store.onChange((typeName, shardIds) => {
      if (typeName === TYPE_NAME) listener(shardIds);
    });
  }

  close(): void {
    this.closed = true;
    this.gossip.close();
  }
}
