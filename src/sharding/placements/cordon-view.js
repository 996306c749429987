// What the coordinator and the operator tools read about cordons: which node addresses take no new shards.
// The cordons themselves live in the replicated placement store (written by the management API); this is
// the read side, kept apart so that allocation, explain and dry runs depend on a view, not on the store.
/** The view of a cluster without cordons (tests, library users who never cordon). */
export const NO_CORDONS = {
    isCordoned: () => false,
    list: () => [],
};
//# sourceMappingURL=cordon-view.js.map