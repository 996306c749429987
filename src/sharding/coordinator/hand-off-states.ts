// Entity state a hand-off carries from the old host to the new home, on the coordinator's side. Two ways:
// - Relayed (a peer before protocol 10): the old host's chunks, accepted only from the owner of the hand-off they
//   name, are held here until the shard's new home confirms its start, and go to that home ahead of each
//   HostShard (one connection, so they arrive first). Bounded in bytes, oldest dropped first.
// - Direct (protocol 10): the HandOff named the new home (`to`) and the old host sent its chunks there itself;
//   nothing is held here, only where they went; the shard is allocated as after any hand-off (there, unless the
//   strategy's answer changed) and its HostShard names the transfer. Should the shard go elsewhere after all (that
//   region gone or no longer a candidate), the old host sends its kept copy to the home chosen instead; a home on
//   the old host itself starts from that copy. A leaving old host whose shard has no home is asked for its copy
//   (inTransit), so its leave does not wait for a home that may never come.
// Whatever ends a state in transit (the start, a drop) releases the old host's copy of it
// (region/retained-states.ts); each call records its sends and losses in the dispatch's Effects. A coordinator
// that stops releases nothing, so the next one asks the old host for what this one had in transit.
import type { Logger } from '../../logging.js';
import type { Effects } from './effects.js';
import type { HandOffRecord } from './state.js';
import type { ShardingMessage } from '../protocol/messages.js';
import { asRestore, type WireEntityState } from '../protocol/state-messages.js';
import { TransferParts } from '../protocol/transfer-parts.js';

type Restore = Extract<ShardingMessage, { readonly type: 'RestoreShardState' }>;
type Chunk = Extract<ShardingMessage, { readonly type: 'ShardStateChunk' }>;

/** A relayed state, held here. */
interface Held {
  /** The old host that sent it, which keeps a copy until released. */
  readonly source: string;
  readonly handOffId: number;
  readonly chunks: TransferParts<Restore>;
  bytes: number;
  /** The region the state was sent to with a HostShard: if it is removed first, the state is lost with it. */
  sentTo: string | undefined;
}

/** A state the old host sent straight to `to` as transfer `handOffId` (it keeps a copy until released). */
interface Direct {
  readonly source: string;
  readonly handOffId: number;
  to: string;
}

/** What goes to a new home with its HostShard: the relayed chunks ahead of it, or the direct transfer it names. */
export interface StateForHome {
  readonly chunks: readonly Restore[];
  readonly transferId?: number;
}

const NO_STATE: StateForHome = { chunks: [] };

export interface HandOffStatesOptions {
  readonly typeName: string;
  readonly maxBytes: number;
  readonly logger: Logger;
}

export class HandOffStates {
  private readonly held = new Map<number, Held>();
  private readonly direct = new Map<number, Direct>();
  private total = 0;

  constructor(private readonly options: HandOffStatesOptions) {}

  /** Bytes held now (the hand-off state gauge). */
  get bytes(): number {
    return this.total;
  }

  /**
   * Whether the state a region reminds this coordinator of (ShardStateHeld, or its registration's `retained`, from
   * `from`) is in transit (held here, or sent straight to a home), so nothing is asked of it. One sent straight to a home is, unless `from` sent it and is leaving while the shard has no home
   * and no hand-off: then it is asked for here, so that region's leave does not wait out its timeout for a home
   * that may never come (a cluster stopping all at once).
   */
  inTransit(fx: Effects, shardId: number, from: string): boolean {
    if (this.held.has(shardId)) return true;
    const direct = this.direct.get(shardId);
    if (direct === undefined) return false;
    const { state } = fx;
    const homeless = state.homeOf(shardId) === undefined && !state.isHandingOff(shardId);
    return !(homeless && direct.source === from && state.isShuttingDown(from));
  }

  /** A chunk from `from`; kept only when it answers the current HandOff of its shard, from that shard's owner. */
  chunk(fx: Effects, from: string, handOff: HandOffRecord | undefined, message: Chunk): void {
    const { shardId, handOffId, entities } = message;
    if (handOff === undefined || handOff.owner !== from || handOff.id !== handOffId) return;
    // The bytes they arrived in go on as they are (protocol 8): no entity is encoded again here.
    const restore = asRestore(message);
    let held = this.held.get(shardId);
    if (held?.handOffId !== handOffId) held = this.begin(fx, from, shardId, handOffId);
    let added = held.chunks.add(message, restore);
    if (added === 'contradicts') {
      // Not one transfer with what came before it (transfer-parts.ts): it starts over from this chunk, and the
      // old host's copy of this hand-off is kept (its end releases it).
      held = this.begin(fx, from, shardId, handOffId, false);
      added = held.chunks.add(message, restore);
    }
    if (added !== 'added') return;
    // Its entities' bytes, not an encoding of it: a new home on this node takes the chunk as it is, and a
    // remote one encodes it when it is sent.
    const size = stateBytes(entities);
    held.bytes += size;
    this.total += size;
    for (const oldest of this.held.keys()) {
      if (this.total <= this.options.maxBytes) break;
      this.options.logger.warn(
        { shardId: oldest, maxHandOffStateBytes: this.options.maxBytes },
        'hand-off state over the bound dropped: its entities start fresh',
      );
      this.drop(fx, oldest, true);
    }
  }

  /**
   * The owner `source` stopped the shard for the HandOff `handOffId` that named `to`: its state went there (a
   * region of protocol 10 sends at least one chunk, empty when it has nothing).
   */
  sentDirect(fx: Effects, shardId: number, source: string, handOffId: number, to: string): void {
    this.drop(fx, shardId, false);
    this.direct.set(shardId, { source, handOffId, to });
  }

  /**
   * What goes with a HostShard for the shard to `to` (`resend`: the retry tick's, its start unconfirmed for a
   * whole interval). Relayed: the chunks, none (and dropped) when incomplete. Direct: the transfer's id; the
   * old host asked to send its copy to `to` when the state went elsewhere, and again on a resend (chunks lost
   * with a connection). A home on the old host starts from the copy it kept.
   */
  before(fx: Effects, to: string, shardId: number, resend = false): StateForHome {
    const direct = this.direct.get(shardId);
    if (direct !== undefined) return this.directFor(fx, to, shardId, direct, resend);
    const held = this.held.get(shardId);
    if (held === undefined) return NO_STATE;
    const { chunks } = held;
    if (!chunks.complete) {
      this.options.logger.warn(
        { shardId, parts: chunks.parts, received: chunks.size },
        'hand-off state incomplete: its entities start fresh',
      );
      this.drop(fx, shardId, true);
      return NO_STATE;
    }
    held.sentTo = to;
    // Each names the count, known now: a new home of any version reads them (stateOnWire drops `last` before 9).
    return { chunks: chunks.inOrder().map((chunk) => ({ ...chunk, parts: chunks.size })) };
  }

  /** The old host's copy of the shard's state is not to be waited for (ShardStateReleased); a held one stays. */
  releaseSource(fx: Effects, shardId: number): void {
    const held = this.held.get(shardId);
    if (held !== undefined) this.release(fx, held, shardId);
  }

  /** The new home confirmed the start (it has restored what it received), or the shard runs somewhere already. */
  started(fx: Effects, shardId: number): void {
    this.drop(fx, shardId, false);
  }

  /**
   * A region is gone: a relayed state sent to it (and not confirmed) is lost like the region's own (a crash). A
   * direct one stays: its shard's next home gets the old host's copy (see before).
   */
  regionGone(fx: Effects, region: string): void {
    for (const [shardId, held] of this.held) if (held.sentTo === region) this.drop(fx, shardId, true);
  }

  clear(): void {
    this.held.clear();
    this.direct.clear();
    this.total = 0;
  }

  private directFor(fx: Effects, to: string, shardId: number, direct: Direct, resend: boolean): StateForHome {
    const { handOffId, source } = direct;
    if (to === source) return { chunks: [], transferId: handOffId };
    if (to !== direct.to || resend) {
      if (!fx.state.isRegion(source)) {
        this.options.logger.warn(
          { shardId, oldHost: source },
          'hand-off state lost with its old host: entities start fresh',
        );
        this.drop(fx, shardId, false);
        return NO_STATE;
      }
      direct.to = to;
      fx.send(source, { type: 'HandOff', typeName: this.options.typeName, shardId, handOffId, to });
    }
    return { chunks: [], transferId: handOffId };
  }

  /** A new transfer of the shard from its owner `source`, in place of any held before (released, by default). */
  private begin(fx: Effects, source: string, shardId: number, handOffId: number, release = true): Held {
    this.drop(fx, shardId, false, release);
    const held: Held = { source, handOffId, chunks: new TransferParts(), bytes: 0, sentTo: undefined };
    this.held.set(shardId, held);
    return held;
  }

  private drop(fx: Effects, shardId: number, lost: boolean, release = true): void {
    const direct = this.direct.get(shardId);
    if (direct !== undefined) {
      this.direct.delete(shardId);
      if (release) this.release(fx, direct, shardId);
    }
    const held = this.held.get(shardId);
    if (held === undefined) return;
    this.held.delete(shardId);
    this.total -= held.bytes;
    if (lost) fx.report({ kind: 'entities-lost', entities: countEntities(held.chunks.values()) });
    if (release) this.release(fx, held, shardId);
  }

  /** A state in transit ended: its old host may drop its copy. */
  private release(fx: Effects, { source, handOffId }: Held | Direct, shardId: number): void {
    fx.send(source, { type: 'ShardStateReleased', typeName: this.options.typeName, shardId, handOffId });
  }
}

function stateBytes(entities: ReadonlyArray<WireEntityState>): number {
  let bytes = 0;
  for (const { entityId, state } of entities) bytes += entityId.length + state.byteLength;
  return bytes;
}

function countEntities(chunks: Iterable<{ readonly entities: ReadonlyArray<WireEntityState> }>): number {
  let count = 0;
  for (const chunk of chunks) count += chunk.entities.length;
  return count;
}
