// Tracks, incrementally, whether every node shows the same placement for every shard in a universe: a
// change re-reads only the changed shards of one node, so checking convergence after every simulated
// millisecond stays cheap even with thousands of shards.
import type { SimNode } from '../protocols/types.js';

const NONE = '\u0000none';

export class Agreement {
  private readonly values: Array<Map<number, string>>;
  private readonly counts = new Map<number, Map<string, number>>();
  private disagreeing = 0;

  constructor(
    private readonly nodes: readonly SimNode[],
    universe: Iterable<number>,
  ) {
    this.values = nodes.map(() => new Map());
    for (const shardId of universe) {
      this.ensure(shardId);
      nodes.forEach((node, i) => this.set(i, shardId, node.read(shardId) ?? NONE));
    }
  }

  get converged(): boolean {
    return this.disagreeing === 0;
  }

  update(node: number, shardIds: readonly number[]): void {
    const reader = this.nodes[node] as SimNode;
    for (const shardId of shardIds) {
      this.ensure(shardId);
      this.set(node, shardId, reader.read(shardId) ?? NONE);
    }
  }

  // A shard first seen in a change: every node starts out as showing nothing for it (each node reports
  // its own changes, so one that already shows a value would have reported it).
  private ensure(shardId: number): void {
    if (this.counts.has(shardId)) return;
    this.counts.set(shardId, new Map([[NONE, this.nodes.length]]));
    for (const values of this.values) values.set(shardId, NONE);
  }

  private set(node: number, shardId: number, value: string): void {
    const counts = this.counts.get(shardId) as Map<string, number>;
    const values = this.values[node] as Map<number, string>;
    const before = values.get(shardId) as string;
    if (before === value) return;
    const wasSplit = counts.size > 1;
    const left = (counts.get(before) ?? 1) - 1;
    if (left === 0) counts.delete(before);
    else counts.set(before, left);
    counts.set(value, (counts.get(value) ?? 0) + 1);
    values.set(shardId, value);
    const isSplit = counts.size > 1;
    if (wasSplit !== isSplit) this.disagreeing += isSplit ? 1 : -1;
  }
}
