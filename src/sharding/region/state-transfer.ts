// A region's part in moving entity state with a graceful hand-off: on the old host, the stopped shard's
// snapshots become ShardStateChunk messages for the coordinator (sent before ShardStopped, each as soon as it is
// packed when the coordinator reads protocol 9); on the new host, each RestoreShardState chunk's states are read
// on arrival (told plain, or their outline read) and wait until the shard starts, which holds each entity's state
// until the entity's first message (held-state.ts: no entity is decoded or created before it is needed). From
// protocol 10 the chunks may come straight from the old host, on another connection than the coordinator's
// HostShard that names their transfer: a shard told to start with a transfer still arriving waits for its last
// part (`expect`). The sends each entity processed travel with its state (dedup-table.ts), so a retry is not
// processed again on the new host.
import type { Logger } from '../../logging.js';
import type { ShardingConfig } from '../core/config.js';
import type { DeliveryEvents } from '../core/sharding-context.js';
import type { ShardingMessage } from '../protocol/messages.js';
import { MAX_SENDER_PROGRESS } from '../protocol/state-messages.js';
import type { ProcessedSends, SenderProgress } from './dedup-table.js';
import { HeldStates, readArrived, type ArrivedChunk, type ArrivedState, type HeldLeft } from './held-state.js';
import { IncomingStates } from './incoming-states.js';
import { knownWhole } from './reshipped-chunks.js';
import { packSnapshots, type PackedChunk, type StoppedStates } from './shard-state.js';
import { SORTING, type SortedStates } from './sorted-states.js';

type Chunk = Extract<ShardingMessage, { readonly type: 'ShardStateChunk' }>;
type Restore = Extract<ShardingMessage, { readonly type: 'RestoreShardState' }>;

/** A shard's chunks sent ahead of its stop to `to` for the HandOff `handOffId` (StateTransfer.early). */
export interface EarlyChunks {
  readonly handOffId: number;
  readonly to: string;
  /** Parts 0.. of the transfer, as sent (kept with the rest until released). */
  readonly chunks: ReadonlyArray<Chunk>;
  /** The held chunks they are (packSnapshots counts them, and sends them no more). */
  readonly sent: ReadonlySet<ArrivedChunk>;
}

/** What a shard starting here restores: its entities' states (held until each one's first message), their sends. */
export interface RestoredShard {
  readonly states: HeldStates;
  readonly sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>>;
  /** What the old host knew of the shard's senders' progress (protocol 11; none from an older one). */
  readonly progress: ReadonlyArray<SenderProgress>;
}

export interface StateTransferOptions {
  readonly typeName: string;
  readonly config: Pick<
    ShardingConfig,
    'maxEntitySnapshotBytes' | 'stateChunkBytes' | 'maxHandOffStateBytes' | 'handOffTimeoutMs'
  >;
  readonly logger: Logger;
  readonly events?: DeliveryEvents | undefined;
  /** The region's clock (its scheduler's now), for how long a transfer nobody waits for is kept (sweep). */
  readonly now?: () => number;
}

export class StateTransfer {
  /** Each state as read when its chunk arrives (readArrived: plain, or its outline). */
  private readonly incoming: IncomingStates<ArrivedState, SortedStates>;
  /** Shards told to start with a transfer (HostShard's `transferId`): its id, and since when one waits for it. */
  private readonly expected = new Map<number, { readonly transferId: number; readonly sinceMs: number }>();
  private shippedBytes = 0;
  private readonly counts = { shipped: 0, restored: 0, too_large: 0, failed: 0 };

  constructor(private readonly options: StateTransferOptions) {
    this.incoming = new IncomingStates(options.config.maxHandOffStateBytes, readArrived, SORTING, options.now);
  }

  /** Bytes of state this node shipped with hand-offs, since the start. */
  get bytesShipped(): number {
    return this.shippedBytes;
  }

  /**
   * Entity states by what became of them here, since the start. `restored`: accepted at a shard's start and
   * held for the entity (see SnapshotOutcome), whether or not the entity has had a message here since.
   */
  get outcomes(): Readonly<Record<'shipped' | 'restored' | 'too_large' | 'failed', number>> {
    return { ...this.counts };
  }

  /** The region's stats of entity state (see RegionStats). */
  stats(): {
    snapshotsShipped: number;
    snapshotsRestored: number;
    snapshotsTooLarge: number;
    snapshotsFailed: number;
    stateBytesShipped: number;
  } {
    const { shipped, restored, too_large: tooLarge, failed } = this.counts;
    return {
      snapshotsShipped: shipped,
      snapshotsRestored: restored,
      snapshotsTooLarge: tooLarge,
      snapshotsFailed: failed,
      stateBytesShipped: this.shippedBytes,
    };
  }

  /** Bytes received for shards not started yet. */
  get bytesWaiting(): number {
    return this.incoming.bytes;
  }

  /**
   * The chunks of a stopped shard's state and of the sends its entities processed (`sends`, by entity), to
   * send before its ShardStopped for `handOffId`. With `stream` (a coordinator on STREAMED_STATE_SINCE or
   * later), each chunk goes to it as soon as it is packed, before the next one is (the transport and the other
   * process work on it meanwhile): without `parts`, its final one saying `last`. Without, every chunk names
   * `parts`, for the caller to send once all are packed. Each chunk carries `progress` (what this node knows of
   * the shard's senders: the new home forgets the sends they retry no more, as this node did), when there is any.
   * After `early` chunks (sent ahead of the stop) the transfer goes on from the next part.
   */
  outgoing(
    shardId: number,
    handOffId: number,
    stopped: StoppedStates,
    sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>> = new Map(),
    stream?: (chunk: Chunk) => void,
    progress: ReadonlyArray<SenderProgress> = [],
    early?: EarlyChunks,
  ): Chunk[] {
    const { config, logger } = this.options;
    const empty = stopped.snapshots.length === 0 && (stopped.held?.states.size ?? 0) === 0 && sends.size === 0;
    if (empty && early === undefined) return [];
    // The chunks sent ahead of the stop are this transfer's first parts; the rest follows them.
    const chunks: Chunk[] = [...(early?.chunks ?? [])];
    const onChunk = (packed: PackedChunk, last: boolean): void => {
      const chunk = this.chunkOf(shardId, handOffId, chunks.length, packed, progress, last);
      chunks.push(chunk);
      stream?.(chunk);
    };
    const packed = packSnapshots(stopped, config, sends, onChunk, early?.sent);
    for (const { entityId, outcome, detail } of packed.refused) {
      logger.warn(
        { shardId, entityId, outcome, detail },
        'entity state not handed over: it starts fresh on the new host',
      );
    }
    this.count('too_large', packed.refused.filter((r) => r.outcome === 'too_large').length);
    this.count('failed', packed.refused.filter((r) => r.outcome === 'failed').length);
    this.count('shipped', packed.values);
    this.shippedBytes += packed.bytes;
    return stream === undefined ? chunks.map((chunk) => ({ ...chunk, parts: chunks.length })) : chunks;
  }

  /**
   * The chunks of a running shard's held states known to go on as they came (knownWhole), to send to `to` as
   * the first parts of transfer `handOffId`, ahead of the shard's stop (BeginHandOff named the new home, protocol
   * 12): the new home reads them while this node's entities stop. The stop's transfer goes on after them
   * (`outgoing`'s `early`), stating again whatever in them is no longer current by then.
   */
  early(
    shardId: number,
    handOffId: number,
    to: string,
    held: HeldLeft,
    progress: ReadonlyArray<SenderProgress>,
  ): EarlyChunks {
    // The chunks known whole without a look at their entries: the first byte goes before the stop's sorting out.
    const whole = knownWhole(held, this.options.config);
    const chunks = whole.map((arrived, part) => this.chunkOf(shardId, handOffId, part, arrived, progress, false));
    return { handOffId, to, chunks, sent: new Set(whole) };
  }

  /** Part `part` of a shard's transfer `handOffId`, carrying `progress` (within what a receiver reads). */
  private chunkOf(
    shardId: number,
    handOffId: number,
    part: number,
    { entities, packed }: PackedChunk,
    progress: ReadonlyArray<SenderProgress>,
    last: boolean,
  ): Chunk {
    // More senders than a receiver reads is no reason to lose the state; fewer is only less help.
    const carried = progress.length === 0 ? {} : { progress: progress.slice(0, MAX_SENDER_PROGRESS) };
    const { typeName } = this.options;
    return {
      type: 'ShardStateChunk',
      ...{ typeName, shardId, handOffId, part, entities, packed },
      ...(last && { last }),
      ...carried,
    };
  }

  /**
   * A chunk for a shard about to start here, from the coordinator or from its old host. True when it completed
   * the transfer a start waits for (the caller starts the shard now).
   */
  received(message: Restore): boolean {
    const { shardId, transferId } = message;
    const awaited = this.expected.get(shardId)?.transferId === transferId;
    const { entities, packed, progress } = message;
    const dropped = this.incoming.add(shardId, transferId, message, entities, packed, progress);
    for (const lost of dropped)
      this.options.logger.warn(
        { shardId: lost },
        'received hand-off state over the bound dropped: its entities start fresh',
      );
    return awaited && this.incoming.complete(shardId, transferId);
  }

  /**
   * On each retry tick: drops an incomplete transfer no HostShard named here once it is older than the hand-off
   * timeout. Its other parts are not coming: chunks sent ahead of a stop to a home the HandOff did not name after all
   * (it left or was cordoned meanwhile) end there. Should a start be named here later, the old host's copy (kept
   * until the new home started the shard) comes again whole: a start unconfirmed for a retry interval makes the
   * coordinator ask for it. A complete transfer stays within the bound: a start named here later takes it as it is.
   */
  sweep(): void {
    const { now, config, logger } = this.options;
    if (now === undefined) return;
    const awaited = (shardId: number, transferId: number): boolean =>
      this.expected.get(shardId)?.transferId === transferId;
    for (const shardId of this.incoming.dropStale(now() - config.handOffTimeoutMs, awaited))
      logger.debug({ shardId }, 'hand-off state no start here waits for dropped');
  }

  /** True while the shard may not start: it was told to start with a transfer that is not complete yet. */
  waitsFor(shardId: number): boolean {
    const expected = this.expected.get(shardId);
    return expected !== undefined && !this.incoming.complete(shardId, expected.transferId);
  }

  /**
   * HostShard named transfer `transferId` for the shard: `ready` (every part is here), `waiting` (the shard does
   * not start until they are: see received), or `fresh` once it waited longer than the hand-off timeout (the old
   * host is gone with it, or never sent it: the shard starts without it, as after a crash).
   */
  expect(shardId: number, transferId: number, nowMs: number): 'ready' | 'waiting' | 'fresh' {
    const expected = this.expected.get(shardId);
    if (expected?.transferId !== transferId) this.expected.set(shardId, { transferId, sinceMs: nowMs });
    if (this.incoming.complete(shardId, transferId)) return 'ready';
    const sinceMs = expected?.transferId === transferId ? expected.sinceMs : nowMs;
    if (nowMs - sinceMs < this.options.config.handOffTimeoutMs) return 'waiting';
    this.options.logger.warn(
      { shardId, transferId, waitedMs: nowMs - sinceMs },
      'hand-off state never arrived from the old host: the shard starts fresh',
    );
    this.expected.delete(shardId);
    this.incoming.drop(shardId);
    return 'fresh';
  }

  /**
   * What to restore into a shard starting now (undefined: a fresh start). Each state was checked and its sends
   * decoded as its chunk arrived, and is accepted (or counted failed) now; its value is decoded when its entity
   * is created (`HeldStates.wake`).
   */
  restore(shardId: number): RestoredShard | undefined {
    const expected = this.expected.get(shardId);
    this.expected.delete(shardId);
    const taken = this.incoming.take(shardId, expected?.transferId);
    if (taken === undefined) return undefined;
    if (taken === 'incomplete') {
      this.options.logger.warn({ shardId }, 'hand-off state incomplete at the start: the shard starts fresh');
      return undefined;
    }
    const { held, sends, unread, chunks, intact } = taken.gathered.finish();
    const unreadable = (entityId: string, reason: string): void =>
      this.options.logger.warn({ shardId, entityId, reason }, 'entity state could not be restored: it starts fresh');
    for (const [entityId, reason] of unread) unreadable(entityId, reason);
    this.count('restored', held.size);
    this.count('failed', unread.size);
    const states = new HeldStates(
      held,
      (entityId, reason) => {
        unreadable(entityId, reason);
        this.count('failed', 1);
      },
      chunks,
      intact,
      [...sends.keys()],
    );
    return { states, sends, progress: taken.progress };
  }

  private count(outcome: 'shipped' | 'restored' | 'too_large' | 'failed', count: number): void {
    this.counts[outcome] += count;
    if (count > 0) this.options.events?.onEntitySnapshots?.(this.options.typeName, outcome, count);
  }
}
