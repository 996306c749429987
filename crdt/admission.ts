// The timestamp rule: which remote slot values a replica lets count.
// - Out of range (wallMs > MAX_HLC_WALL_MS): refused everywhere, forever; deterministic.
// - More than maxAheadMs (default 7 days) ahead of this replica's wall clock: held, re-checked on every
//   later use of the store, admitted once the clock is within maxAheadMs; admission is never taken back.
//   Values under this replica's own node name are exempt: they are its earlier incarnation's, and its
//   clock must carry on past them (a node restarted with its clock behind still overrides them).
// Refused and held values stay in the Yjs document (later updates of the same writer depend on them, so
// dropping one would stall that writer for good) but are never a winner nor a base for a successor.
// Every replica ends up admitting the same values (all in-range ones, once its clock has passed them),
// so replicas with sane clocks converge.
import { MAX_HLC_COUNTER, MAX_HLC_WALL_MS, PlacementStoreError } from './errors.js';
import type { Hlc } from './hlc.js';
import type { PlacementLog } from './log.js';
import { compareSlots, type Slot } from './slots.js';

export type Refusal = 'out_of_range' | 'ahead_of_clock';

/** A slot value kept out of the read path; `where` says where it goes once admitted. */
export interface RefusedSlot {
  readonly typeName: string;
  readonly slot: Slot;
  readonly where: 'document' | 'base';
  readonly reason: Refusal;
}

/** Whether `hlc` lies in the range every replica accepts; the successor of such a value never overflows. */
export function inRange(hlc: Hlc): boolean {
  return hlc.wallMs <= MAX_HLC_WALL_MS && hlc.counter <= MAX_HLC_COUNTER;
}

export class Admission {
  private readonly refused = new Map<string, RefusedSlot>();
  private readonly reported = new Set<string>();
  private outOfRange = 0;
  private aheadOfClock = 0;
  private clockDrift = 0;
  // No held value is due before this wall-clock time: lets due() cost one now() call on the read path.
  private nextDueAt = Infinity;
  private latestAdmitted = 0;

  constructor(
    private readonly node: string,
    private readonly now: () => number,
    private readonly maxAheadMs: number,
    private readonly log: PlacementLog,
  ) {}

  /**
   * Whether a remote slot value counts now. A refused one is remembered (held ones until the clock reaches
   * them, out-of-range document ones until the slot changes or is force-removed), counted and logged once
   * per writer and reason. A broken now() admits: the clock is this replica's fault, not the writer's.
   */
  admit(typeName: string, slot: Slot, where: 'document' | 'base'): boolean {
    const reason = this.problem(slot);
    if (reason === null) {
      if (slot.hlc.wallMs > this.latestAdmitted) this.latestAdmitted = slot.hlc.wallMs;
      return true;
    }
    if (reason === 'out_of_range') this.outOfRange++;
    else this.aheadOfClock++;
    this.report(slot, reason);
    if (reason === 'out_of_range' && where === 'base') return false;
    const key = refusedKey(where, typeName, slot.shardId, slot.writer);
    const current = this.refused.get(key);
    if (current === undefined || compareSlots(slot, current.slot) > 0)
      this.refused.set(key, { typeName, slot, where, reason });
    if (reason === 'ahead_of_clock') this.nextDueAt = Math.min(this.nextDueAt, slot.hlc.wallMs - this.maxAheadMs);
    return false;
  }

  /**
   * The clock refused to move to an admitted remote timestamp more than maxDriftMs ahead (hlc.ts): the
   * value counts, the clock stays put. Counted and logged once per writer as well.
   */
  driftRefused(remote: Hlc, localWallMs: number): void {
    this.clockDrift++;
    const once = `clock\u0000${remote.node}`;
    if (this.reported.has(once)) return;
    this.reported.add(once);
    this.log({
      level: 'warn',
      message:
        `placement timestamp from node ${JSON.stringify(remote.node)} is ${remote.wallMs - localWallMs} ms ahead ` +
        `of the local clock; the clock was not moved (reported once per node)`,
      details: { node: remote.node, remoteWallMs: remote.wallMs, localWallMs },
    });
  }

  /**
   * The greatest wallMs of any remote value that counts here: a lower bound of the writers' clocks, which
   * a node whose own clock is behind can take its expiries from (at most maxAheadMs ahead of its clock).
   */
  get latestAdmittedWallMs(): number {
    return this.latestAdmitted;
  }

  /** Whether another replica with a clock like this one's would admit a value with `hlc` now. */
  admissible(hlc: Hlc): boolean {
    return inRange(hlc) && !this.ahead(hlc.wallMs);
  }

  /** The document slot changed (new value or deleted): whatever was refused there is gone. */
  forget(typeName: string, shardId: number, writer: string): void {
    this.refused.delete(refusedKey('document', typeName, shardId, writer));
  }

  /** Held values the clock has now reached; they are no longer remembered here. */
  due(): RefusedSlot[] {
    const now = this.wall();
    if (this.refused.size === 0 || now === undefined || now < this.nextDueAt) return [];
    const out: RefusedSlot[] = [];
    this.nextDueAt = Infinity;
    for (const [key, entry] of this.refused) {
      if (entry.reason !== 'ahead_of_clock') continue;
      const dueAt = entry.slot.hlc.wallMs - this.maxAheadMs;
      if (dueAt <= now) {
        this.refused.delete(key);
        if (entry.slot.hlc.wallMs > this.latestAdmitted) this.latestAdmitted = entry.slot.hlc.wallMs;
        out.push(entry);
      } else {
        this.nextDueAt = Math.min(this.nextDueAt, dueAt);
      }
    }
    return out;
  }

  /** The latest value held (ahead of the clock) for a shard, if any: a local write could not beat it. */
  heldFor(typeName: string, shardId: number): Slot | undefined {
    let latest: Slot | undefined;
    for (const entry of this.refused.values()) {
      if (entry.reason !== 'ahead_of_clock' || entry.typeName !== typeName || entry.slot.shardId !== shardId) continue;
      if (latest === undefined || compareSlots(entry.slot, latest) > 0) latest = entry.slot;
    }
    return latest;
  }

  /**
   * Throws `clock_skew` (before anything is written) when this replica holds a value for one of the shards
   * that is ahead of its clock by more than maxAheadMs but less than twice that: most likely this node's
   * clock is behind (the value is the cluster's), so its write would lose to that value on every replica
   * whose clock is right, and acknowledging it would be a lie. A value further ahead is a broken or hostile
   * clock elsewhere: refusing writes then would let it freeze the shard, so they are taken (and win on
   * every replica with a sane clock).
   */
  assertCanWin(typeName: string, shardIds: readonly number[]): void {
    if (this.refused.size === 0) return;
    const now = this.wall();
    if (now === undefined) return;
    for (const shardId of shardIds) {
      const held = this.heldFor(typeName, shardId);
      if (held === undefined) continue;
      const aheadMs = held.hlc.wallMs - now;
      if (aheadMs > 2 * this.maxAheadMs) continue;
      throw new PlacementStoreError(
        'clock_skew',
        `cannot write ${typeName} shard ${shardId}: this node holds a value for it written by ${JSON.stringify(held.writer)} ` +
          `${aheadMs} ms ahead of this node's clock (more than ${this.maxAheadMs} ms), and a write here would lose to it ` +
          `wherever the clock has reached it. Fix the clock that is wrong (NTP on ${JSON.stringify(held.writer)} or on this node), ` +
          `or remove the shard's placement with force to delete the held value; nothing was written`,
      );
    }
  }

  /** Refused values of one shard (force removal deletes them); base ones are dropped here as well. */
  takeShard(typeName: string, shardId: number): RefusedSlot[] {
    const out: RefusedSlot[] = [];
    for (const [key, entry] of this.refused) {
      if (entry.typeName !== typeName || entry.slot.shardId !== shardId) continue;
      out.push(entry);
      if (entry.where === 'base') this.refused.delete(key);
    }
    return out;
  }

  /** Compaction: the document refused values lived in is now the previous one, folded into the base. */
  moveToBase(): void {
    for (const [key, entry] of [...this.refused]) {
      if (entry.where !== 'document') continue;
      this.refused.delete(key);
      if (entry.reason === 'out_of_range') continue;
      const baseKey = refusedKey('base', entry.typeName, entry.slot.shardId, entry.slot.writer);
      const current = this.refused.get(baseKey);
      if (current === undefined || compareSlots(entry.slot, current.slot) > 0)
        this.refused.set(baseKey, { ...entry, where: 'base' });
      // nextDueAt already covers it: the entry's time did not change.
    }
  }

  stats(): { held: number; quarantined: number; outOfRange: number; aheadOfClock: number; clockDrift: number } {
    let held = 0;
    for (const entry of this.refused.values()) if (entry.reason === 'ahead_of_clock') held++;
    const { outOfRange, aheadOfClock, clockDrift } = this;
    return { held, quarantined: this.refused.size - held, outOfRange, aheadOfClock, clockDrift };
  }

  private problem(slot: Slot): Refusal | null {
    if (!inRange(slot.hlc) || (slot.over !== undefined && !inRange(slot.over))) return 'out_of_range';
    return slot.writer !== this.node && this.ahead(slot.hlc.wallMs) ? 'ahead_of_clock' : null;
  }

  private ahead(wallMs: number): boolean {
    const now = this.wall();
    return now !== undefined && wallMs - now > this.maxAheadMs;
  }

  private wall(): number | undefined {
    try {
      const now = Math.floor(this.now());
      return Number.isSafeInteger(now) && now >= 0 ? now : undefined;
    } catch {
      return undefined;
    }
  }

  private report(slot: Slot, reason: Refusal): void {
    const once = `${reason}\u0000${slot.writer}`;
    if (this.reported.has(once)) return;
    this.reported.add(once);
    const now = this.wall() ?? 0;
    const message =
      reason === 'out_of_range'
        ? `placement timestamp from node ${JSON.stringify(slot.writer)} is beyond the representable range ` +
          `(wallMs ${slot.hlc.wallMs}); it never counts (reported once per node)`
        : `placement timestamp from node ${JSON.stringify(slot.writer)} is ${slot.hlc.wallMs - now} ms ahead ` +
          `of the local clock; it is held until the clock is within ${this.maxAheadMs} ms of it (reported once per node)`;
    this.log({
      level: 'warn',
      message,
      details: { node: slot.writer, reason, remoteWallMs: slot.hlc.wallMs, localWallMs: now },
    });
  }
}

function refusedKey(where: string, typeName: string, shardId: number, writer: string): string {
  return `${where}\u0000${typeName}\u0000${shardId}\u0000${writer}`;
}
