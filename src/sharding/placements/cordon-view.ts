// What the coordinator and the operator tools read about cordons: which node addresses take no new shards.
// The cordons themselves live in the replicated placement store (written by the management API); this is
// the read side, kept apart so that allocation, explain and dry runs depend on a view, not on the store.

/** One cordoned node, as the store holds it. */
export interface CordonRecord {
  /** The node address (`host:port`), as members list it. */
  readonly address: string;
  readonly by?: string;
  readonly reason?: string;
}

/** A read view of the cluster-wide cordons; cheap to call on every allocation. */
export interface CordonView {
  isCordoned(address: string): boolean;
  list(): readonly CordonRecord[];
}

/** The view of a cluster without cordons (tests, library users who never cordon). */
export const NO_CORDONS: CordonView = {
  isCordoned: () => false,
  list: () => [],
};
