// The coordinator's state as one value: registered regions and proxies, each shard's home, shards sent
// HostShard and not yet confirmed, the hand-offs in progress, and the regions leaving. Its fields change only
// through the named transitions below (Pekko's State.updated(event)), each of which keeps the maps
// consistent with one another, so a change of state is found by its name, not by grepping for `.set(`.
import { EarlyRegistrations } from './early-registrations.js';
import type { HandOff } from './hand-off.js';

export interface RegionLocations {
  readonly address: string;
  readonly shards: number[];
}

export class CoordinatorState {
  /** Registrations from nodes not yet members here, to be asked again once they are (early-registrations.ts). */
  readonly early = new EarlyRegistrations();
  /** Non-proxy regions and their shards, each set in allocation order (oldest first). */
  private readonly regions = new Map<string, Set<number>>();
  private readonly proxies = new Set<string>();
  private readonly homes = new Map<number, string>();
  /** Shards sent HostShard and not yet confirmed with ShardStarted. */
  private readonly hostPending = new Map<number, string>();
  private readonly handOffs = new Map<number, HandOff>();
  /** Regions that asked to leave: their shards are being handed off and they get no new ones. */
  private readonly shuttingDown = new Set<string>();

  // ---- transitions ----

  /** A non-proxy region registered. True if it is new. */
  regionRegistered(region: string): boolean {
    if (this.regions.has(region)) return false;
    this.regions.set(region, new Set());
    return true;
  }

  proxyRegistered(region: string): void {
    this.proxies.add(region);
  }

  /**
   * A registered region reports hosting a shard. A shard without a home gets this one; one with another home
   * stays there, and that home is returned (the claimant must learn it and stop its copy).
   */
  shardClaimed(region: string, shardId: number): string | undefined {
    const owned = this.regions.get(region);
    if (owned === undefined) throw new Error(`shard ${shardId} claimed by unregistered region ${region}`);
    const home = this.homes.get(shardId);
    if (home === undefined) {
      this.homes.set(shardId, region);
      owned.add(shardId);
    }
    if (this.hostPending.get(shardId) === region) this.hostPending.delete(shardId);
    return home !== undefined && home !== region ? home : undefined;
  }

  /** The coordinator chose a home and sends it HostShard; pending until ShardStarted. */
  shardAllocated(shardId: number, region: string): void {
    this.homes.set(shardId, region);
    let owned = this.regions.get(region);
    if (owned === undefined) {
      owned = new Set();
      this.regions.set(region, owned);
    }
    owned.add(shardId);
    this.hostPending.set(shardId, region);
  }

  /** A region confirmed a start: a HostShard to it needs no more retries. */
  shardStarted(region: string, shardId: number): void {
    if (this.hostPending.get(shardId) === region) this.hostPending.delete(shardId);
  }

  /** A registered region runs a shard with no home and no hand-off: it becomes the home. True if adopted. */
  shardAdopted(region: string, shardId: number): boolean {
    const owned = this.regions.get(region);
    if (owned === undefined || this.homes.has(shardId) || this.handOffs.has(shardId)) return false;
    this.homes.set(shardId, region);
    owned.add(shardId);
    return true;
  }

  /** A region asked to leave. True if it had not asked before. */
  regionShuttingDown(region: string): boolean {
    if (this.shuttingDown.has(region)) return false;
    this.shuttingDown.add(region);
    return true;
  }

  /**
   * A region (or proxy) is gone: its shards lose their home. Hand-offs are left to the caller, which must
   * end or advance the ones involving the region (see handOffsInvolving). Returns the shards it had.
   */
  regionTerminated(region: string): ReadonlySet<number> {
    const shards = this.regions.get(region) ?? new Set<number>();
    this.regions.delete(region);
    this.proxies.delete(region);
    this.shuttingDown.delete(region);
    for (const shardId of shards) {
      if (this.homes.get(shardId) === region) this.homes.delete(shardId);
      if (this.hostPending.get(shardId) === region) this.hostPending.delete(shardId);
    }
    return shards;
  }

  /** A hand-off began: the shard is no longer being started anywhere. */
  handOffStarted(handOff: HandOff): void {
    if (this.handOffs.has(handOff.shardId)) throw new Error(`shard ${handOff.shardId} is already being handed off`);
    this.handOffs.set(handOff.shardId, handOff);
    this.hostPending.delete(handOff.shardId);
  }

  /** The owner stopped the shard (or is gone): the shard has no home until it is allocated again. */
  handOffCompleted(handOff: HandOff): void {
    this.endHandOff(handOff);
    const { shardId, owner } = handOff;
    if (this.homes.get(shardId) === owner) this.homes.delete(shardId);
    this.regions.get(owner)?.delete(shardId);
  }

  /**
   * The hand-off ran out of time: the shard stays where it is. A shard adopted as stopping has no home yet;
   * its owner (if still registered) may still be stopping it, so it is the only safe home. Returns the home.
   */
  handOffTimedOut(handOff: HandOff): string | undefined {
    this.endHandOff(handOff);
    const { shardId, owner } = handOff;
    const owned = this.regions.get(owner);
    if (!this.homes.has(shardId) && owned !== undefined) {
      this.homes.set(shardId, owner);
      owned.add(shardId);
    }
    return this.homes.get(shardId);
  }

  /** The coordinator stops: every hand-off is dropped with its timer. */
  handOffsAbandoned(): void {
    for (const handOff of this.handOffs.values()) handOff.cancel();
    this.handOffs.clear();
  }

  private endHandOff(handOff: HandOff): void {
    if (this.handOffs.get(handOff.shardId) !== handOff) throw new Error(`no such hand-off of shard ${handOff.shardId}`);
    handOff.cancel();
    this.handOffs.delete(handOff.shardId);
  }

  // ---- queries ----

  homeOf(shardId: number): string | undefined {
    return this.homes.get(shardId);
  }

  /** A region or a proxy. */
  isRegistered(address: string): boolean {
    return this.regions.has(address) || this.proxies.has(address);
  }

  /** A non-proxy region. */
  isRegion(address: string): boolean {
    return this.regions.has(address);
  }

  isShuttingDown(address: string): boolean {
    return this.shuttingDown.has(address);
  }

  /** The shards of a region, oldest allocation first (a copy). */
  shardsOf(region: string): number[] {
    return [...(this.regions.get(region) ?? [])];
  }

  /** Regions, then proxies: everyone who routes messages of this type. */
  registered(): string[] {
    return [...this.regions.keys(), ...this.proxies];
  }

  handOff(shardId: number): HandOff | undefined {
    return this.handOffs.get(shardId);
  }

  isHandingOff(shardId: number): boolean {
    return this.handOffs.has(shardId);
  }

  /** A snapshot: callers may end hand-offs while they iterate. */
  handOffList(): HandOff[] {
    return [...this.handOffs.values()];
  }

  handingOff(): number[] {
    return [...this.handOffs.keys()].sort((a, b) => a - b);
  }

  pendingStarts(): Array<[shardId: number, region: string]> {
    return [...this.hostPending];
  }

  get counts(): { regions: number; proxies: number; allocatedShards: number; handOffs: number } {
    return {
      regions: this.regions.size,
      proxies: this.proxies.size,
      allocatedShards: this.homes.size,
      handOffs: this.handOffs.size,
    };
  }

  /** The shards of every region, read-only (allocation hands strategies a copy of it). */
  shardMap(): ReadonlyMap<string, ReadonlySet<number>> {
    return this.regions;
  }

  /** Where every allocated shard lives, by region (regions without shards included), sorted. */
  locations(): RegionLocations[] {
    return [...this.regions]
      .map(([address, shards]) => ({ address, shards: [...shards].sort((a, b) => a - b) }))
      .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  }
}
