// The programmatic face of external allocation for one entity type: operators' explicit placements (a
// target, a mode, an optional expiry and provenance) are written to this node's replica of the placement
// store (and replicate to every node from there), read back as the `ExternalAllocationState` the external
// strategy consults, and moved now with rebalanceNow. A programmatic caller's input is parsed here, at the edge
// (pin-request.ts); the management API parses at its routes and hands over ParsedPins (setParsedPlacements,
// dryRunPins). One verb writes pins at every layer: set (setPlacements here and in the API's backend and client).
import { PlacementStoreError, whenDurable, type Placement } from '../../../crdt/index.js';
import type { NodeAddress } from '../../cluster/address.js';
import { isGone, type MemberInfo } from '../../cluster/member.js';
import { ActorTsError } from '../../errors.js';
import type { Logger } from '../../logging.js';
import type { ClusterSharding } from '../cluster-sharding.js';
import type { RebalanceNowResult } from '../coordinator-client.js';
import { explicitPlacementState } from '../placements/explicit-placement-state.js';
import { pinRecordOf, type PinRecord } from '../placements/placement-record.js';
import { ruleToMeta, type PlacementOptions } from '../placements/placement-options.js';
import { PlacementRuleError } from '../placements/placement-rule-error.js';
import { targetMatches } from '../placements/placement-target.js';
import { parsePins, type ParsedPin, type PinRequest, type PinScope } from '../placements/pin-request.js';
import { parseShardId, type ShardId, type ShardRange } from '../placements/shard-range.js';
import { askDryRunPlacements, type DryRunMoves } from './shard-insight.js';
import { activePin, type ExternalAllocationState, type PlacementPin } from '../placements/placement-pin.js';

export { explicitPlacementState };
export { pinRecords, type PinRecord, type PinRecordsOptions } from '../placements/placement-record.js';
export type { ParsedPin, PinRequest, PinScope } from '../placements/pin-request.js';
export type { ShardId, ShardRange } from '../placements/shard-range.js';

/** A pin as a placements dry run would write it (no writer or timestamp: nothing is written). */
export type ProposedPinRecord = Omit<PinRecord, 'writer' | 'hlc' | 'expired'>;

/** What a placements dry run answers: the pins as they would be written and the moves they would start. */
export interface PlacementsDryRun extends DryRunMoves {
  readonly placements: ReadonlyArray<ProposedPinRecord>;
}

/** Options of ExternalAllocationController. */
export interface ExternalAllocationControllerOptions {
  /** The clock expiries are computed and judged by (epoch ms); the strategy and coordinator must read the same. Default Date.now. */
  readonly now?: () => number;
  /** Where written and removed placements are logged, with their reason and author. Default: silent. */
  readonly logger?: Logger;
  /**
   * The cluster's members: with it, a pin whose target no current member (neither down nor removed) matches
   * is refused with PlacementRuleError `unknown_target` unless the write allows it. Default: not checked.
   */
  readonly members?: () => ReadonlyArray<MemberInfo>;
  /**
   * Why this node's clock is too far off its peers' to stamp a write (Cluster.clock), or undefined. While it says
   * why, writes and removals are refused with PlacementStoreError `clock_skew` before anything is written: the
   * peers would hold the value back, so an acknowledgement would be no promise. Default: not checked.
   */
  readonly clockSkew?: () => string | undefined;
}

/** How a write treats its targets. */
export interface PlacementWriteOptions {
  /** Write a pin even when no current member matches its target (a node planned to join). Default false. */
  readonly allowUnknownTarget?: boolean;
}

/** rebalanceNow could not move every shard it was given; `result` says which were started. */
export class RebalanceError extends ActorTsError {
  constructor(readonly result: RebalanceNowResult) {
    super(
      'not_allocated',
      `shards ${result.unallocated.join(', ')} have no home yet, so there is nothing to move; ` +
        `their first message allocates them through the strategy` +
        (result.accepted.length > 0 ? ` (hand-off started for ${result.accepted.join(', ')})` : ''),
    );
    this.name = 'RebalanceError';
  }
}

/**
 * Operator control of one entity type's explicit placements: pin, unpin, list and move shards. Writes go to this
 * node's replica of the placement store (replicated to every node) and resolve once applied; `getState` is what
 * externalAllocationStrategy reads.
 */
export class ExternalAllocationController {
  /**
   * The state `externalAllocationStrategy` reads at every allocate and rebalance: a view of this node's
   * replica, rebuilt only when the store's snapshot changed. Pass it as the strategy's `getState`.
   */
  readonly getState: () => ExternalAllocationState;

  private readonly now: () => number;
  private readonly logger: Logger | undefined;
  private readonly members: (() => ReadonlyArray<MemberInfo>) | undefined;
  private readonly clockSkew: (() => string | undefined) | undefined;

  constructor(
    private readonly sharding: ClusterSharding,
    readonly typeName: string,
    options: ExternalAllocationControllerOptions = {},
  ) {
    if (typeof sharding?.entityTypes !== 'function' || sharding.placementStore === undefined) {
      throw new ActorTsError('invalid_argument', 'ExternalAllocationController needs a ClusterSharding');
    }
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw new ActorTsError('invalid_argument', 'now must be a function returning epoch milliseconds');
    }
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
    this.members = options.members;
    this.clockSkew = options.clockSkew;
    // Validates the type name the way the store does, so a bad name fails here and not at first use.
    sharding.placementStore.snapshot(typeName);
    // The runtime's own view when there is one, so the strategy, explain and this controller read one object.
    this.getState =
      typeof sharding.placementState === 'function'
        ? sharding.placementState(typeName)
        : explicitPlacementState(() => sharding.placementStore.snapshot(typeName));
  }

  /** Pins a shard to a target; see setPlacements. Resolves with what was written. */
  async setPlacement(
    shardId: number,
    target: NodeAddress | string,
    options?: PlacementOptions & PlacementWriteOptions,
  ): Promise<PinRecord> {
    const { allowUnknownTarget, ...rule } = options ?? {};
    const [written] = await this.setPlacements([{ ...rule, shardId, target }], {
      allowUnknownTarget: allowUnknownTarget === true,
    });
    return written as PinRecord;
  }

  /**
   * Pins shards to targets, in one store transaction (one update on the wire, one change notice). Every
   * entry is validated before any is written (`invalid_shard`, `invalid_address`, and PlacementRuleError
   * `invalid_target` / `invalid_placement`; nothing written then). An expiry is fixed when the call is made.
   * Written once this replica may take writes (it joined and synced with a peer, or has none; at most 5 s:
   * a restarted node writing sooner could lose to its previous incarnation's older value), then replicated;
   * a later write, from any node, wins. With the `members` option a target no current member matches is
   * refused (`unknown_target`: a typo would leave the shard without its home) unless `allowUnknownTarget`
   * says it is a node planned to join: the pin then applies once it joins. Resolves with what was written.
   */
  async setPlacements(entries: ReadonlyArray<PinRequest>, options: PlacementWriteOptions = {}): Promise<PinRecord[]> {
    return this.setParsedPlacements(this.parse(entries), options);
  }

  /**
   * Writes pins parsed already (the management API parses at its route, against pinScope): as setPlacements,
   * without parsing again; only whether a target is a current member is judged here (`unknown_target`).
   */
  async setParsedPlacements(pins: ReadonlyArray<ParsedPin>, options: PlacementWriteOptions = {}): Promise<PinRecord[]> {
    if (options.allowUnknownTarget !== true) this.requireKnownTargets(pins);
    this.refuseOnClockSkew();
    const writes = pins.map(({ shardId, target, rule }) => {
      const meta = ruleToMeta(rule);
      return meta === undefined ? { shardId, target: target.canonical } : { shardId, target: target.canonical, meta };
    });
    await this.sharding.placementsReady();
    const written = this.sharding.placementStore.setMany(this.typeName, writes);
    await whenDurable(this.sharding.placementStore);
    const records = writes.map(({ shardId }, i) => pinRecordOf(shardId, written[i] as Placement));
    for (const record of records) {
      this.logger?.info({ typeName: this.typeName, ...record, hlc: undefined }, 'explicit placement set');
    }
    return records;
  }

  /**
   * What setPlacements(entries) would start now, judged by the coordinator with its strategy: every entry
   * validated exactly as setPlacements does (same errors), nothing written, nothing handed off.
   */
  async dryRunPlacements(
    entries: ReadonlyArray<PinRequest>,
    options: PlacementWriteOptions = {},
  ): Promise<PlacementsDryRun> {
    return this.dryRunPins(this.parse(entries), options);
  }

  /** @deprecated The old name of setParsedPlacements (one verb for writing pins); removed in the next minor release. */
  writePins(pins: ReadonlyArray<ParsedPin>, options: PlacementWriteOptions = {}): Promise<PinRecord[]> {
    return this.setParsedPlacements(pins, options);
  }

  /** dryRunPlacements for pins parsed already (see setParsedPlacements). */
  async dryRunPins(pins: ReadonlyArray<ParsedPin>, options: PlacementWriteOptions = {}): Promise<PlacementsDryRun> {
    if (options.allowUnknownTarget !== true) this.requireKnownTargets(pins);
    const proposed = pins.map(({ shardId, target, rule }) => ({
      shardId,
      target: target.canonical,
      mode: rule.mode,
      expiresAt: rule.expiresAt,
    }));
    const { moves, warnings } = await askDryRunPlacements(this.sharding, this.typeName, proposed);
    const placements = pins.map(({ shardId, target, rule: { mode, expiresAt, reason, by } }) => ({
      shardId,
      target: target.canonical,
      mode,
      expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString(),
      reason,
      by,
    }));
    return { placements, moves, warnings };
  }

  /**
   * Drops a shard's pin, once this replica may take writes (as setPlacements); the shard returns to the
   * fallback strategy at the next rebalance. An expired pin is dropped too (it is still stored). Resolves
   * false when it had no pin (nothing written).
   */
  async removePlacement(shardId: number): Promise<boolean> {
    return this.removePin(parseShardId(shardId, this.shardRange()));
  }

  /** removePlacement for a shard id parsed already (see setParsedPlacements). */
  async removePin(shardId: ShardId): Promise<boolean> {
    this.refuseOnClockSkew();
    await this.sharding.placementsReady();
    const store = this.sharding.placementStore;
    const before = store.snapshot(this.typeName).placements.get(shardId);
    if (before === undefined) return false;
    store.remove(this.typeName, shardId);
    await whenDurable(store);
    this.logger?.info({ typeName: this.typeName, shardId, target: before.target }, 'explicit placement removed');
    return true;
  }

  /** A write stamped by a clock far off its peers' would be held back by them: refused before anything is written. */
  private refuseOnClockSkew(): void {
    const reason = this.clockSkew?.();
    if (reason !== undefined) throw new PlacementStoreError('clock_skew', reason);
  }

  /** The pins the strategy honours now: targets it can read, not expired, by ascending shard id. */
  async getPlacements(): Promise<ReadonlyMap<number, PlacementPin>> {
    const now = this.now();
    const active = new Map<number, PlacementPin>();
    for (const [shardId, value] of this.getState().explicitPlacements) {
      const pin = activePin(value, now);
      if (pin !== undefined) active.set(shardId, pin);
    }
    return new Map([...active].sort((a, b) => a[0] - b[0]));
  }

  /**
   * Hands these shards off now; the coordinator re-allocates them through the strategy, so a pin decides
   * where they go. Resolves, with the shards accepted, once the coordinator accepted them all. Rejects with
   * `invalid_shard` (nothing sent) for ids out of range, and with a `RebalanceError` naming shards that have
   * no home yet (the others were still handed off).
   */
  async rebalanceNow(shardIds: ReadonlyArray<number>): Promise<RebalanceNowResult> {
    if (!Array.isArray(shardIds)) throw new ActorTsError('invalid_argument', 'shardIds must be an array of shard ids');
    const range = this.shardRange();
    const parsed = shardIds.map((shardId) => parseShardId(shardId, range));
    const result = await this.sharding.rebalanceNow(this.typeName, parsed);
    if (result.unallocated.length > 0) throw new RebalanceError(result);
    return result;
  }

  /**
   * What a pin written now is parsed against (parsePins): this type's shard range, and the clock its expiry
   * counts from: the later of this node's and the latest timestamp its replica counts from any node, so a pin
   * written through a node whose clock is behind is not expired on arrival elsewhere.
   */
  pinScope(): PinScope {
    const range = this.shardRange();
    return { ...range, now: Math.max(this.now(), this.sharding.placementStore.latestTimestampMs()) };
  }

  /** Every entry parsed before any is used (see setPlacements); the expiry fixed now. */
  private parse(entries: ReadonlyArray<PinRequest>): ParsedPin[] {
    if (!Array.isArray(entries))
      throw new ActorTsError('invalid_argument', 'entries must be an array of { shardId, target }');
    return parsePins(entries, this.pinScope());
  }

  /** Throws `unknown_target` naming the first target no current member matches, and how to write it anyway. */
  private requireKnownTargets(pins: ReadonlyArray<ParsedPin>): void {
    if (this.members === undefined) return;
    const live = this.members().filter((member) => !isGone(member.status));
    const unknown = new Map<string, { shardIds: number[]; required: boolean }>();
    for (const { shardId, target, rule } of pins) {
      if (live.some((member) => targetMatches(target, member))) continue;
      const entry = unknown.get(target.canonical) ?? { shardIds: [], required: false };
      unknown.set(target.canonical, {
        shardIds: [...entry.shardIds, shardId],
        required: entry.required || rule.mode === 'require',
      });
    }
    const first = [...unknown][0];
    if (first === undefined) return;
    const [target, { shardIds, required }] = first;
    const others = unknown.size > 1 ? ` (and ${unknown.size - 1} more unknown target(s))` : '';
    const known = live
      .map((member) => member.address.toString())
      .slice(0, 10)
      .join(', ');
    const shards = `shard${shardIds.length > 1 ? 's' : ''} ${shardIds.join(', ')}`;
    // A require pin to nobody leaves its shard without a home; a prefer pin to nobody is in force nowhere (the
    // fallback keeps the shard where it is), which a typo makes just as useless.
    const outcome = required
      ? `${shards} would lose ${shardIds.length > 1 ? 'their' : 'its'} home`
      : `the pin of ${shards} would be in force nowhere (the shard stays where the fallback puts it)`;
    throw new PlacementRuleError(
      'unknown_target',
      `no current member matches target ${target}${others}, so ${outcome}; nothing was written. ` +
        `Members now: ${known || 'none'}. ` +
        'If the target is a node that has not joined yet, write it with allowUnknownTarget: true (CLI --allow-unknown).',
    );
  }

  private shardRange(): ShardRange {
    const type = this.sharding.entityTypes().get(this.typeName);
    if (type === undefined) {
      throw new ActorTsError('unknown_type', `entity type "${this.typeName}" is not initialised on this node`);
    }
    return { typeName: this.typeName, numberOfShards: type.numberOfShards };
  }
}
