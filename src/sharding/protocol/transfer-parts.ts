// Which parts of one hand-off state transfer have arrived, and when it is complete: the one rule the coordinator
// (coordinator/hand-offs.ts, from the old host) and the new home (region/shard-state.ts, from the coordinator)
// both assemble chunks by. A chunk learns its transfer's count of parts from `parts` (every chunk up to protocol 8)
// or from `last` on its final part (protocol 9's streamed chunks, sent before the count is known). Parts may
// arrive in any order and more than once; a transfer is complete when its count is known and every part below it
// is in. The chunks come from the network: one that contradicts what its transfer already knows (another count,
// a part at or past a known last, a last below a part already in) is not merged; the holder starts the transfer
// over from it, as a chunk naming another `parts` always made it.

/** A chunk's place in its transfer. */
export interface ChunkPlace {
  readonly part: number;
  readonly parts?: number | undefined;
  readonly last?: true | undefined;
}

/** The count of parts a chunk says its transfer has: its `parts`, or one past its part when it is the last. */
export function partsNamed(chunk: ChunkPlace): number | undefined {
  return chunk.parts ?? (chunk.last ? chunk.part + 1 : undefined);
}

/** What `TransferParts.add` did with a chunk. */
export type PartAdded = 'added' | 'duplicate' | 'contradicts';

/** The parts of one transfer received so far, each with what the holder keeps of it (`T`). */
export class TransferParts<T> {
  private readonly received = new Map<number, T>();
  private count: number | undefined;
  /** The highest part in, so a `last` below it is seen without a scan. */
  private highest = -1;

  /** The transfer's count of parts, once a chunk named it. */
  get parts(): number | undefined {
    return this.count;
  }

  /** Parts in. */
  get size(): number {
    return this.received.size;
  }

  /** Every part below a known count is in. */
  get complete(): boolean {
    return this.count !== undefined && this.received.size === this.count;
  }

  /**
   * Takes part `chunk.part` (kept as `value`) unless it is in already; a chunk that contradicts the transfer
   * changes nothing (`contradicts`: the caller starts the transfer over from it).
   */
  add(chunk: ChunkPlace, value: T): PartAdded {
    const named = partsNamed(chunk);
    if (this.count !== undefined && (chunk.part >= this.count || (named !== undefined && named !== this.count)))
      return 'contradicts';
    if (named !== undefined && this.highest >= named) return 'contradicts';
    if (named !== undefined) this.count = named;
    if (this.received.has(chunk.part)) return 'duplicate';
    this.received.set(chunk.part, value);
    if (chunk.part > this.highest) this.highest = chunk.part;
    return 'added';
  }

  /** What is kept of part `part`, if it is in. */
  at(part: number): T | undefined {
    return this.received.get(part);
  }

  /** The kept values in part order (all of them once complete). */
  inOrder(): T[] {
    return [...this.received.entries()].sort(([x], [y]) => x - y).map(([, value]) => value);
  }

  /** The kept values in arrival order. */
  values(): IterableIterator<T> {
    return this.received.values();
  }
}
