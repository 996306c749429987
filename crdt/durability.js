// The durability seam of the placement store: whether what a replica holds reaches a disk, and how a caller
// waits for it. An in-memory store has none (`store.durability` is undefined); a DurablePlacementStore
// (persistence/durable-store.ts) exposes one. Everything above the store (the replicator, the node's health,
// metrics, writes that acknowledge only once committed) reads this interface, never the class.
export {};
//# sourceMappingURL=durability.js.map