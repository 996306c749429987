// Entity state in transit through the coordinator: the old host's chunks, accepted only from the owner of
// the hand-off they name, are held until the shard's new home confirms its start, and go to that home ahead
// of each HostShard (one connection, so they arrive first). Bounded in bytes, oldest dropped first. Whatever
// ends a held state (the start, a drop) releases the old host's copy of it (region/retained-states.ts);
// each call records its sends and losses in the dispatch's Effects;
// a coordinator that stops releases nothing, so the next one asks the old host for what this one held.
import type { Logger } from '../../logging.js';
import type { ShardingMessage } from '../protocol/messages.js';
import type { WireEntityState } from '../protocol/state-messages.js';
import type { Effects } from './effects.js';
import type { HandOffRecord } from './state.js';

type Restore = Extract<ShardingMessage, { readonly type: 'RestoreShardState' }>;

interface Held {
  /** The old host that sent it, which keeps a copy until released. */
  readonly source: string;
  readonly handOffId: number;
  readonly parts: number;
  readonly chunks: Map<number, Restore>;
  bytes: number;
  /** The region the state was sent to with a HostShard: if it is removed first, the state is lost with it. */
  sentTo: string | undefined;
}

export interface HandOffStatesOptions {
  readonly typeName: string;
  readonly maxBytes: number;
  readonly logger: Logger;
}

export class HandOffStates {
  private readonly held = new Map<number, Held>();
  private total = 0;

  constructor(private readonly options: HandOffStatesOptions) {}

  /** Bytes held now (the hand-off state gauge). */
  get bytes(): number {
    return this.total;
  }

  /** True while a state of the shard is held here (in transit to its new home). */
  holds(shardId: number): boolean {
    return this.held.has(shardId);
  }

  /** A chunk from `from`; kept only when it answers the current HandOff of its shard, from that shard's owner. */
  chunk(
    fx: Effects,
    from: string,
    handOff: HandOffRecord | undefined,
    message: Extract<ShardingMessage, { readonly type: 'ShardStateChunk' }>,
  ): void {
    const { shardId, handOffId, part, parts, entities } = message;
    if (handOff === undefined || handOff.owner !== from || handOff.id !== handOffId) return;
    let held = this.held.get(shardId);
    if (held === undefined || held.handOffId !== handOffId || held.parts !== parts) {
      this.drop(fx, shardId, false);
      held = { source: from, handOffId, parts, chunks: new Map(), bytes: 0, sentTo: undefined };
      this.held.set(shardId, held);
    }
    if (held.chunks.has(part)) return;
    const restore: Restore = {
      type: 'RestoreShardState',
      typeName: this.options.typeName,
      shardId,
      transferId: handOffId,
      part,
      parts,
      entities,
      // The bytes they arrived in go on as they are (protocol 8): no entity is encoded again here.
      ...(message.packed && { packed: message.packed }),
    };
    // Its entities' bytes, not an encoding of it: a new home on this node takes the chunk as it is, and a
    // remote one encodes it when it is sent.
    const size = stateBytes(entities);
    held.chunks.set(part, restore);
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

  /** The chunks to send to `to` ahead of a HostShard for the shard; none, and dropped, when incomplete. */
  before(fx: Effects, to: string, shardId: number): Restore[] {
    const held = this.held.get(shardId);
    if (held === undefined) return [];
    if (held.chunks.size !== held.parts) {
      this.options.logger.warn(
        { shardId, parts: held.parts, received: held.chunks.size },
        'hand-off state incomplete: its entities start fresh',
      );
      this.drop(fx, shardId, true);
      return [];
    }
    held.sentTo = to;
    return [...held.chunks.values()].sort((x, y) => x.part - y.part);
  }

  /** The old host's copy of the shard's held state is not to be waited for (ShardStateReleased); this one stays. */
  releaseSource(fx: Effects, shardId: number): void {
    const held = this.held.get(shardId);
    if (held !== undefined) this.release(fx, held, shardId);
  }

  /** The new home confirmed the start (it has restored what it received), or the shard runs somewhere already. */
  started(fx: Effects, shardId: number): void {
    this.drop(fx, shardId, false);
  }

  /** A region is gone: state sent to it (and not confirmed) is lost like the region's own (a crash). */
  regionGone(fx: Effects, region: string): void {
    for (const [shardId, held] of this.held) if (held.sentTo === region) this.drop(fx, shardId, true);
  }

  clear(): void {
    this.held.clear();
    this.total = 0;
  }

  private drop(fx: Effects, shardId: number, lost: boolean): void {
    const held = this.held.get(shardId);
    if (held === undefined) return;
    this.held.delete(shardId);
    this.total -= held.bytes;
    if (lost) fx.entitiesLost(countEntities(held.chunks.values()));
    this.release(fx, held, shardId);
  }

  /** A held state ended here: its old host may drop its copy. */
  private release(fx: Effects, held: Held, shardId: number): void {
    fx.send(held.source, {
      type: 'ShardStateReleased',
      typeName: this.options.typeName,
      shardId,
      handOffId: held.handOffId,
    });
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
