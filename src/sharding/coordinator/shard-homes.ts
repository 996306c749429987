// Giving shards without a home one: on request (GetShardHome), after a hand-off, once the warm-up gate opens,
// and again for the shards the strategy had no home for ("no home now": a hard placement rule no candidate
// satisfies, or no candidate at all) whenever something that may change that happens. Those are asked again
// only on such events (membership, registrations, placements, a pin expiring), never on a timer of their
// own, so an unsatisfiable rule costs nothing while nothing changes.
import type { Logger } from '../../logging.js';
import type { ShardingMessage } from '../protocol/messages.js';
import type { Allocator } from './allocation.js';
import type { CoordinatorState } from './state.js';
import { WaitingShards } from './waiting-shards.js';
import type { WarmUpGate } from './warm-up-gate.js';

export interface ShardHomesOptions {
  readonly typeName: string;
  readonly state: CoordinatorState;
  readonly gate: WarmUpGate;
  readonly allocator: Allocator;
  readonly logger: Logger;
  readonly send: (to: string, message: ShardingMessage) => void;
  /** Sends to every registered region and proxy. */
  readonly broadcast: (message: ShardingMessage) => void;
}

export class ShardHomes {
  private readonly waiting = new WaitingShards();

  constructor(private readonly options: ShardHomesOptions) {}

  /** Shards without a home now, waiting for a change that may give them one. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /** A hand-off ended with the shard stopped: it is allocated again at once and every region learns where. */
  freed(shardId: number): void {
    const { gate, allocator, logger } = this.options;
    if (!gate.open) {
      // For the reason GetShardHome waits: a region not heard from yet may run this shard. It is allocated
      // (and announced to whoever asks) once the gate opens.
      gate.defer(shardId);
      return;
    }
    const region = allocator.allocate(shardId);
    if (region === undefined) {
      logger.info({ shardId }, 'no home for the shard after hand-off; it is allocated once a region may take it');
      this.waiting.add(shardId);
      return;
    }
    this.announce(shardId, region);
  }

  allocateAndAnnounce(shardId: number, requesters: Iterable<string>): void {
    const { allocator, send, typeName } = this.options;
    const region = allocator.allocate(shardId);
    // No home now: the requesters keep their messages buffered (and ask again on their retry tick); the
    // shard is also allocated as soon as a change may give it a home (retryWaiting).
    if (region === undefined) {
      this.waiting.add(shardId, requesters);
      return;
    }
    for (const requester of requesters) send(requester, { type: 'ShardHome', typeName, shardId, region });
  }

  /**
   * Answers the GetShardHome requests that waited for the warm-up or for an unreachable member, then asks
   * again for the shards without a home (its callers are the changes that may give them one).
   */
  flushDeferred(): void {
    const { gate, state, send, typeName } = this.options;
    for (const [shardId, requesters] of gate.takeDeferred()) {
      if (state.isHandingOff(shardId)) continue;
      const home = state.homeOf(shardId);
      if (home === undefined) this.allocateAndAnnounce(shardId, requesters);
      else for (const requester of requesters) send(requester, { type: 'ShardHome', typeName, shardId, region: home });
    }
    this.retryWaiting();
  }

  /** Asks again for every shard without a home; each one allocated is announced to every region. */
  retryWaiting(): void {
    const { gate, state, allocator } = this.options;
    if (this.waiting.size === 0 || !gate.open) return;
    for (const [shardId, requesters] of this.waiting.take()) {
      // Allocated meanwhile (a request, a registration), or moving: nothing left to do here.
      if (state.isHandingOff(shardId) || state.homeOf(shardId) !== undefined) continue;
      const region = allocator.allocate(shardId);
      if (region === undefined) this.waiting.add(shardId, requesters);
      else this.announce(shardId, region);
    }
  }

  private announce(shardId: number, region: string): void {
    this.options.broadcast({ type: 'ShardHome', typeName: this.options.typeName, shardId, region });
  }
}
