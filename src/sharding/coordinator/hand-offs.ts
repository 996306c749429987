// The hand-off protocol of one coordinator: starting hand-offs (rebalancing, manual moves, leaves, the
// down-removal margin, shards adopted as stopping), moving each through its phases as regions answer,
// re-sending on the retry tick, and ending it by completion or timeout. Each step is an event applied to the
// coordinator's state, where each hand-off is a record (state.ts HandOffRecord); this class keeps only
// the hand-off ids and counters, and records its sends and timers in the dispatcher's Effects. What becomes of
// a shard once it is free is not its business: the calls that complete hand-offs return the shards freed,
// and the dispatcher gives them homes (ShardHomes.freed). Below it, HandOffStates: the entity state a
// hand-off carries from the old host to the new home.
import { randomInt } from 'node:crypto';
import type { Logger } from '../../logging.js';
import type { Effects, Outgoing } from './effects.js';
import type { HandOffCause, HandOffPhase, HandOffRecord } from './state.js';
import type { ShardingMessage } from '../protocol/messages.js';
import type { WireEntityState } from '../protocol/state-messages.js';
import { TransferParts } from '../protocol/transfer-parts.js';

export interface HandOffsOptions {
  readonly typeName: string;
  readonly logger: Logger;
  /** The coordinator's clock (its scheduler's now). */
  readonly now: () => number;
  readonly timeoutMs: number;
  /** The type's shard count: a shard id a region names at or above it is ignored. */
  readonly numberOfShards: number;
  readonly ids?: HandOffIds;
}

/** Most calls free nothing: one empty list for them all. */
const NOTHING_FREED: readonly number[] = [];

/** The key of a shard's hand-off timeout among the dispatcher's timers. */
function timerKey(shardId: number): string {
  return `hand-off:${shardId}`;
}

export class HandOffs {
  private readonly ids: HandOffIds;
  private readonly counts = { started: 0, completed: 0, timedOut: 0 };

  constructor(private readonly options: HandOffsOptions) {
    this.ids = options.ids ?? new HandOffIds();
  }

  get counters(): { readonly started: number; readonly completed: number; readonly timedOut: number } {
    return { ...this.counts };
  }

  /** Moves a shard off its home: every region stops routing to it, then the home stops it. */
  begin(fx: Effects, shardId: number, cause: HandOffCause): void {
    const { state } = fx;
    const owner = state.homeOf(shardId);
    if (owner === undefined || state.isHandingOff(shardId)) return;
    this.track(fx, shardId, owner, 'begin', state.registered(), cause);
  }

  /**
   * Waits for `owner` to stop a shard it may still run (a former coordinator's hand-off, or a member in its
   * down-removal margin): the shard is not allocatable until the owner says it stopped or is removed.
   */
  awaitStop(fx: Effects, shardId: number, owner: string, cause: HandOffCause): void {
    if (fx.state.isHandingOff(shardId)) return;
    this.track(fx, shardId, owner, 'handoff', [], cause);
  }

  /**
   * A region reports a shard it is still stopping (a former coordinator was lost before the ShardStopped):
   * it is handed off from that region (not allocatable, its GetShardHome requests wait) until that region
   * answers this coordinator's HandOff or is removed. A shard with a known home is left alone: the claim is
   * stale or about a copy already told to stop, and a live home must never be erased.
   */
  adoptStopping(fx: Effects, from: string, shardId: number): void {
    const { state } = fx;
    if (shardId >= this.options.numberOfShards || state.homeOf(shardId) !== undefined || state.isHandingOff(shardId))
      return;
    this.options.logger.info(
      { shardId, region: from },
      'shard still stopping on a region: allocating it once it stopped',
    );
    this.awaitStop(fx, shardId, from, 'stopping');
  }

  /**
   * A region keeps the state of a shard it stopped (named in its registration, or by ShardStateHeld while
   * unreleased). In transit here (`inTransit`), or the shard is moving: nothing to do yet. The shard has a
   * home: that copy is not needed. Neither: the copy in transit was lost with a former coordinator (its node
   * crashed or left), so this one asks the region for it with a HandOff, and allocates the shard once the
   * state is here.
   */
  stateHeld(fx: Effects, from: string, shardId: number, handOffId: number, inTransit: boolean): void {
    const { numberOfShards, typeName, logger } = this.options;
    if (shardId >= numberOfShards || inTransit || fx.state.isHandingOff(shardId)) return;
    if (fx.state.homeOf(shardId) !== undefined)
      return fx.send(from, { type: 'ShardStateReleased', typeName, shardId, handOffId });
    logger.info({ shardId, region: from }, 'a region keeps the state of a shard without a home: asking for it');
    this.awaitStop(fx, shardId, from, 'state-held');
  }

  /** BeginHandOffAck. Returns the shards freed (the owner was gone by then). */
  acknowledged(fx: Effects, from: string, shardId: number): readonly number[] {
    if (!fx.state.isHandingOff(shardId)) return NOTHING_FREED;
    fx.apply({ type: 'HandOffAcknowledged', shardId, region: from });
    return this.advance(fx, shardId);
  }

  /**
   * ShardStopped: ends the hand-off only if it answers this very hand-off's HandOff (see isEndedBy). Returns
   * the shards freed.
   */
  stopped(fx: Effects, from: string, shardId: number, handOffId: number): readonly number[] {
    const handOff = fx.state.handOff(shardId);
    if (handOff === undefined || !isEndedBy(handOff, from, handOffId)) return NOTHING_FREED;
    this.complete(fx, shardId, handOff);
    return [shardId];
  }

  /**
   * A region was removed: hand-offs from it are complete (its entities are gone), others stop waiting for it.
   * Returns the shards freed, in the order their hand-offs completed.
   */
  regionGone(fx: Effects, region: string): readonly number[] {
    const { state } = fx;
    const freed: number[] = [];
    for (const shardId of state.handingOff()) {
      const handOff = state.handOff(shardId);
      if (handOff === undefined) continue;
      if (handOff.owner === region) {
        this.complete(fx, shardId, handOff);
        freed.push(shardId);
      } else if (handOff.phase === 'begin' && handOff.pendingAcks.has(region)) {
        fx.apply({ type: 'HandOffAcknowledged', shardId, region });
        freed.push(...this.advance(fx, shardId));
      }
    }
    return freed;
  }

  /**
   * Stops a copy of a shard homed elsewhere, with a HandOff of its own: an id no hand-off waits for, so its
   * ShardStopped changes nothing here.
   */
  stopCopy(fx: Effects, region: string, shardId: number): void {
    fx.send(region, { type: 'HandOff', typeName: this.options.typeName, shardId, handOffId: this.ids.take() });
  }

  /** The retry tick: each hand-off's messages for its current phase again. */
  resend(fx: Effects): void {
    for (const shardId of fx.state.handingOff()) this.sendFor(fx, shardId, fx.state.handOff(shardId));
  }

  /** The coordinator stops: every hand-off is dropped with its timer. */
  stop(fx: Effects): void {
    for (const shardId of fx.state.handingOff()) fx.cancelTimer(timerKey(shardId));
    fx.apply({ type: 'HandOffsAbandoned' });
  }

  /** A hand-off's timer fired: if that hand-off still runs, the shard stays, and every region learns its home. */
  timeOut(fx: Effects, shardId: number, id: number): void {
    const { logger, timeoutMs, typeName } = this.options;
    const { state } = fx;
    const handOff = state.handOff(shardId);
    if (handOff?.id !== id) return;
    const { owner } = handOff;
    this.counts.timedOut++;
    logger.warn({ shardId, owner, timeoutMs }, 'hand-off timed out; shard stays');
    fx.apply({ type: 'HandOffTimedOut', shardId, id });
    const region = state.homeOf(shardId);
    if (region === undefined) return;
    fx.broadcast({ type: 'ShardHome', typeName, shardId, region });
  }

  private track(
    fx: Effects,
    shardId: number,
    owner: string,
    phase: HandOffPhase,
    pendingAcks: Iterable<string>,
    cause: HandOffCause,
  ): void {
    const { now, timeoutMs, logger } = this.options;
    const id = this.ids.take();
    const startedAtMs = now();
    fx.apply({ type: 'HandOffStarted', shardId, handOff: { id, owner, phase, pendingAcks, startedAtMs, cause } });
    fx.startTimer(timerKey(shardId), timeoutMs, { type: 'hand-off-timeout', shardId, id });
    this.counts.started++;
    logger.debug({ shardId, owner, phase, cause }, 'hand-off started');
    this.sendFor(fx, shardId, fx.state.handOff(shardId));
  }

  /** Moves to the HandOff phase once every region stopped routing to the shard; returns the shards freed. */
  private advance(fx: Effects, shardId: number): readonly number[] {
    const { state } = fx;
    const handOff = state.handOff(shardId);
    if (handOff === undefined || !readyToHandOff(handOff)) return NOTHING_FREED;
    fx.apply({ type: 'HandOffPhaseEntered', shardId });
    if (state.isRegion(handOff.owner)) {
      this.sendFor(fx, shardId, state.handOff(shardId));
      return NOTHING_FREED;
    }
    this.complete(fx, shardId, handOff);
    return [shardId];
  }

  private complete(fx: Effects, shardId: number, handOff: HandOffRecord): void {
    const { logger, now } = this.options;
    fx.cancelTimer(timerKey(shardId));
    fx.apply({ type: 'HandOffCompleted', shardId, id: handOff.id });
    this.counts.completed++;
    fx.report({ kind: 'hand-off-completed', seconds: (now() - handOff.startedAtMs) / 1000 });
    logger.debug({ shardId, from: handOff.owner }, 'hand-off complete');
  }

  private sendFor(fx: Effects, shardId: number, handOff: HandOffRecord | undefined): void {
    if (handOff === undefined) return;
    for (const { to, message } of handOffMessages(shardId, handOff, this.options.typeName)) fx.send(to, message);
  }
}

/** True once every region stopped routing to the shard and the HandOff may be sent. */
export function readyToHandOff(handOff: HandOffRecord): boolean {
  return handOff.phase === 'begin' && handOff.pendingAcks.size === 0;
}

/**
 * Only the owner's answer to this hand-off's HandOff ends it. Anything else (a copy stopping elsewhere, a
 * late or duplicated report of an earlier stop, one answering a former coordinator) is no news, and acting
 * on it could allocate a shard that still runs.
 */
export function isEndedBy(handOff: HandOffRecord, from: string, handOffId: number): boolean {
  return handOff.phase === 'handoff' && from === handOff.owner && handOffId === handOff.id;
}

/** What to (re-)send for the hand-off's current phase. */
export function handOffMessages(shardId: number, handOff: HandOffRecord, typeName: string): Outgoing[] {
  if (handOff.phase === 'begin')
    return [...handOff.pendingAcks].map((to) => ({ to, message: { type: 'BeginHandOff', typeName, shardId } }));
  return [{ to: handOff.owner, message: { type: 'HandOff', typeName, shardId, handOffId: handOff.id } }];
}

/**
 * Hand-off ids. A random start, so the ids of earlier coordinators (whose HandOffs a region may still answer
 * late) do not collide with this one's; wraps before leaving the safe integers.
 */
export class HandOffIds {
  private nextId: number;

  constructor(start: number = randomInt(1, 2 ** 47)) {
    if (!Number.isSafeInteger(start) || start < 1)
      throw new RangeError(`hand-off ids start at a positive safe integer, got ${start}`);
    this.nextId = start;
  }

  take(): number {
    const id = this.nextId;
    this.nextId = id >= Number.MAX_SAFE_INTEGER ? 1 : id + 1;
    return id;
  }
}

// Entity state in transit through the coordinator: the old host's chunks, accepted only from the owner of
// the hand-off they name, are held until the shard's new home confirms its start, and go to that home ahead
// of each HostShard (one connection, so they arrive first). Bounded in bytes, oldest dropped first. Whatever
// ends a held state (the start, a drop) releases the old host's copy of it (region/retained-states.ts);
// each call records its sends and losses in the dispatch's Effects;
// a coordinator that stops releases nothing, so the next one asks the old host for what this one held.

type Restore = Extract<ShardingMessage, { readonly type: 'RestoreShardState' }>;

interface Held {
  /** The old host that sent it, which keeps a copy until released. */
  readonly source: string;
  readonly handOffId: number;
  readonly chunks: TransferParts<Restore>;
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
    const { shardId, handOffId, part, parts, last, entities } = message;
    if (handOff === undefined || handOff.owner !== from || handOff.id !== handOffId) return;
    const restore: Restore = {
      type: 'RestoreShardState',
      typeName: this.options.typeName,
      ...{ shardId, transferId: handOffId, part, entities },
      ...(parts !== undefined && { parts }),
      ...(last && { last }),
      // The bytes they arrived in go on as they are (protocol 8): no entity is encoded again here.
      ...(message.packed && { packed: message.packed }),
    };
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

  /** The chunks to send to `to` ahead of a HostShard for the shard; none, and dropped, when incomplete. */
  before(fx: Effects, to: string, shardId: number): Restore[] {
    const held = this.held.get(shardId);
    if (held === undefined) return [];
    const { chunks } = held;
    if (!chunks.complete) {
      this.options.logger.warn(
        { shardId, parts: chunks.parts, received: chunks.size },
        'hand-off state incomplete: its entities start fresh',
      );
      this.drop(fx, shardId, true);
      return [];
    }
    held.sentTo = to;
    // Each names the count, known now: a new home of any version reads them (stateOnWire drops `last` before 9).
    return chunks.inOrder().map((chunk) => ({ ...chunk, parts: chunks.size }));
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

  /** A new transfer of the shard from its owner `source`, in place of any held before (released, by default). */
  private begin(fx: Effects, source: string, shardId: number, handOffId: number, release = true): Held {
    this.drop(fx, shardId, false, release);
    const held: Held = { source, handOffId, chunks: new TransferParts(), bytes: 0, sentTo: undefined };
    this.held.set(shardId, held);
    return held;
  }

  private drop(fx: Effects, shardId: number, lost: boolean, release = true): void {
    const held = this.held.get(shardId);
    if (held === undefined) return;
    this.held.delete(shardId);
    this.total -= held.bytes;
    if (lost) fx.report({ kind: 'entities-lost', entities: countEntities(held.chunks.values()) });
    if (release) this.release(fx, held, shardId);
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
