// The old host's copy of a stopped shard's hand-off state, kept until the coordinator says the shard's new
// home started it (ShardStateReleased). The coordinator's own copy dies with its node: a crash, or a leave
// while the state is in transit or its allocation is deferred. This copy outlives that: the region names what
// it keeps when it registers with the next coordinator, which asks for it with a HandOff of its own, and the
// chunks go out again under that id. Bounded in bytes (oldest dropped first, as the coordinator's copy is).
import type { RetainedShard, ShardingMessage } from '../protocol/messages.js';

type Chunk = Extract<ShardingMessage, { readonly type: 'ShardStateChunk' }>;

interface Kept {
  handOffId: number;
  readonly chunks: ReadonlyArray<Chunk>;
  readonly bytes: number;
  /** Retry ticks since it was kept or last named: the coordinator is reminded of it once this passes 1. */
  ticks: number;
}

export class RetainedStates {
  private readonly kept = new Map<number, Kept>();
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    /** A kept state dropped to stay within maxBytes (its entities start fresh if the coordinator lost its copy). */
    private readonly onDropped: (shardId: number) => void = () => {},
  ) {}

  /** Shards whose state is kept here. */
  get size(): number {
    return this.kept.size;
  }

  /** Bytes of entity state kept here. */
  get bytes(): number {
    return this.total;
  }

  /** Keeps the chunks a shard's stop sent under `handOffId` (replacing any earlier copy of that shard). */
  keep(shardId: number, handOffId: number, chunks: ReadonlyArray<Chunk>): void {
    this.drop(shardId);
    if (chunks.length === 0) return;
    let bytes = 0;
    for (const chunk of chunks) for (const entity of chunk.entities) bytes += entity.state.byteLength;
    this.kept.set(shardId, { handOffId, chunks, bytes, ticks: 0 });
    this.total += bytes;
    for (const oldest of this.kept.keys()) {
      if (this.total <= this.maxBytes) break;
      this.drop(oldest);
      this.onDropped(oldest);
    }
  }

  /** ShardStateReleased: the copy shipped under `handOffId` is not needed any more. True if it was dropped. */
  released(shardId: number, handOffId: number): boolean {
    if (this.kept.get(shardId)?.handOffId !== handOffId) return false;
    this.drop(shardId);
    return true;
  }

  /**
   * The kept chunks again, for a coordinator's HandOff `handOffId` of a shard no longer here (one that lost
   * its copy, or one whose ShardStopped got lost with the chunks ahead of it); none when nothing is kept.
   */
  reship(shardId: number, handOffId: number): Chunk[] {
    const kept = this.kept.get(shardId);
    if (kept === undefined) return [];
    kept.handOffId = handOffId;
    kept.ticks = 0;
    // The count is known now: named on every chunk, they go to a coordinator of any version.
    return kept.chunks.map((chunk) => ({ ...chunk, handOffId, parts: kept.chunks.length }));
  }

  /** The chunks kept from the shard's stop under `handOffId` (none when another or nothing is kept). */
  copyOf(shardId: number, handOffId: number): ReadonlyArray<Chunk> {
    const kept = this.kept.get(shardId);
    return kept?.handOffId === handOffId ? kept.chunks : [];
  }

  /** The shard starts here again: whatever it ran elsewhere since supersedes the copy kept from its stop. */
  drop(shardId: number): void {
    const kept = this.kept.get(shardId);
    if (kept === undefined) return;
    this.kept.delete(shardId);
    this.total -= kept.bytes;
  }

  /** Every kept state, as a registration names them. */
  list(): RetainedShard[] {
    return [...this.kept].map(([shardId, { handOffId }]) => ({ shardId, handOffId }));
  }

  /**
   * On each retry tick: the kept states to name to the coordinator again (ShardStateHeld), those kept for
   * more than one tick, in case a release was lost; each is named at most every other tick.
   */
  overdue(): RetainedShard[] {
    const due: RetainedShard[] = [];
    for (const [shardId, kept] of this.kept) {
      if (++kept.ticks < 2) continue;
      kept.ticks = 0;
      due.push({ shardId, handOffId: kept.handOffId });
    }
    return due;
  }

  clear(): void {
    this.kept.clear();
    this.total = 0;
  }
}
