// How the coordinator reads the membership: the role filter and members by key (which statuses may host is the
// vocabulary's HOSTING_STATUSES). One place, so the registry, the warm-up gate and allocation agree. Below it,
// what the coordinator does with the membership: the warm-up and partition gate, the failover report, and the
// down-removal margin (each section headed by what it is for).
import { type MemberInfo, HOSTING_STATUSES, isGone, type DepartedMember } from '../../cluster/member.js';
import type { Logger } from '../../logging.js';
import type { Effects } from './effects.js';
import type { CoordinatorState } from './state.js';
import { NodeAddress } from '../../cluster/address.js';
import { DeathConfirmations } from '../../cluster/membership/death-confirmation.js';
import type { Scheduler } from '../../cluster/scheduler.js';
import type { ProbeResult } from '../../cluster/transport/transport.js';

/** True when the type has no role or the member was started with it. */
export function hasRole(member: MemberInfo, role: string | undefined): boolean {
  return role === undefined || (member.roles ?? []).includes(role);
}

/** The members by address key. */
export function memberMap(members: ReadonlyArray<MemberInfo>): Map<string, MemberInfo> {
  const map = new Map<string, MemberInfo>();
  for (const member of members) map.set(member.address.toString(), member);
  return map;
}

// The warm-up and partition gate: a coordinator gives a never-heard-of shard a home only once it has heard
// from every region that may run it. It waits for the regions of reachable members to register (bounded by
// the warm-up time), and for unreachable or just-downed members that have not registered, since they may run
// shards this coordinator never heard of. Operator actions that need the full map wait here; shards asked for
// meanwhile wait in the coordinator's state (status `waiting`, reason `warm-up`).

export interface WarmUpGateOptions {
  readonly role: string | undefined;
  readonly warmupMs: number;
  readonly logger: Logger;
  /** The cluster's members as this node sees them now (ShardingContext.membership). */
  readonly members: () => ReadonlyArray<MemberInfo>;
  /** Who registered (a region or proxy of this type). */
  readonly state: Pick<CoordinatorState, 'isRegistered'>;
  /** Members downed recently: one that has not registered may still run shards nobody here knows of. */
  readonly margin: Pick<DownRemovalMargin, 'anyInMargin'>;
  /** The coordinator's clock. */
  readonly now: () => number;
}

/** The key of the warm-up timer among the dispatcher's timers. */
const WARM_UP_TIMER = 'warm-up';

/**
 * The gate. The calls that may make it warm return the reason when they did (undefined otherwise): the
 * dispatcher then runs its own warm-up step and the actions queued with whenWarm (takeQueued), in that order.
 */
export class WarmUpGate {
  private warm = false;
  private stopped = false;
  /** Operator requests that arrived during warm-up (their answers need the full map). */
  private readonly afterWarmup: Array<() => void> = [];
  /** Members last seen unreachable and unregistered. */
  private readonly awaitedUnreachable = new Set<string>();

  constructor(private readonly options: WarmUpGateOptions) {}

  get isWarm(): boolean {
    return this.warm;
  }

  /** Starts the warm-up clock; ends it at once if every expected region already registered. */
  start(fx: Effects): string | undefined {
    this.restartTimer(fx);
    for (const key of this.unregisteredUnreachable()) this.awaitedUnreachable.add(key);
    return this.check(fx);
  }

  /** Becomes warm no more (the dispatcher cancels its timers). */
  stop(): void {
    this.stopped = true;
  }

  /** Becomes warm once every expected region registered. */
  check(fx: Effects): string | undefined {
    if (this.warm || this.stopped) return undefined;
    if (!this.expectedRegions().every((address) => this.options.state.isRegistered(address))) return undefined;
    fx.cancelTimer(WARM_UP_TIMER);
    return this.becomeWarm('every region registered');
  }

  /** The warm-up timer fired. */
  elapsed(): string | undefined {
    return this.becomeWarm('warm-up time elapsed');
  }

  /** Runs the action now if warm, else once warm. */
  whenWarm(action: () => void): void {
    if (this.warm) action();
    else this.afterWarmup.push(action);
  }

  /** The actions queued until warm, handed over once (the dispatcher runs them once warm). */
  takeQueued(): Array<() => void> {
    return this.warm ? this.afterWarmup.splice(0) : [];
  }

  /** True when a shard nobody reported may be given a home: warm, and no unregistered member may run it. */
  get open(): boolean {
    return this.warm && !this.stopped && !this.unknownHostsUnreachable();
  }

  /**
   * True while a member that may host shards of this type is unreachable and has not registered: it may run
   * any shard this coordinator has never heard of (the coordinator moved while it was cut off), so giving
   * such a shard a home now could run it twice. The wait ends when the member registers (it is reachable
   * again) or is downed (keep-majority downing bounds it by downAfterMs; a minority side downs itself).
   */
  unknownHostsUnreachable(): boolean {
    const { margin, state, now } = this.options;
    return this.unregisteredUnreachable().length > 0 || margin.anyInMargin((key) => !state.isRegistered(key), now());
  }

  /**
   * A member that was unreachable and unregistered is reachable again: its region is about to register the
   * shards it kept running, so the coordinator waits for it once more (bounded by the warm-up time) before
   * it allocates shards it has never heard of. Returns the members to ask to register.
   */
  trackReturningMembers(fx: Effects): string[] {
    const unreachable = new Set(this.unregisteredUnreachable());
    const expected = new Set(this.expectedRegions());
    const returning = [...this.awaitedUnreachable].filter(
      (key) => !unreachable.has(key) && expected.has(key) && !this.options.state.isRegistered(key),
    );
    this.awaitedUnreachable.clear();
    for (const key of unreachable) this.awaitedUnreachable.add(key);
    if (returning.length === 0 || !this.warm || this.stopped) return [];
    this.warm = false;
    this.options.logger.info({ members: returning }, 'unregistered members reachable again: waiting for their regions');
    this.restartTimer(fx);
    return returning;
  }

  /** Reachable members that may host shards of this type; the warm-up waits for their registrations. */
  expectedRegions(): string[] {
    return this.mayHost()
      .filter((m) => m.reachable)
      .map((m) => m.address.toString());
  }

  private unregisteredUnreachable(): string[] {
    return this.mayHost()
      .filter((m) => !m.reachable && !this.options.state.isRegistered(m.address.toString()))
      .map((m) => m.address.toString());
  }

  private mayHost(): MemberInfo[] {
    return this.options.members().filter((m) => HOSTING_STATUSES.has(m.status) && hasRole(m, this.options.role));
  }

  private becomeWarm(reason: string): string | undefined {
    if (this.warm || this.stopped) return undefined;
    this.warm = true;
    return reason;
  }

  private restartTimer(fx: Effects): void {
    fx.startTimer(WARM_UP_TIMER, this.options.warmupMs, { type: 'warm-up' });
  }
}

// What the coordinator reports of a failover (issue 26): a downed member's region removed, then its first
// shard started on a new home (re-homed). The orphaned shards of each removed region are remembered until one
// of them starts elsewhere, bounded by the shard count.

export class FailoverReport {
  /** Shards of removed regions not yet started elsewhere, with the region they were on. */
  private readonly orphans = new Map<number, string>();

  /** @param reported whether anyone listens (CoordinatorEvents.onFailoverStep): without, nothing is kept. */
  constructor(private readonly reported: boolean) {}

  regionRemoved(fx: Effects, region: string, shards: Iterable<number>): void {
    if (!this.reported) return;
    fx.report({ kind: 'failover-step', member: region, phase: 'removed' });
    for (const shardId of shards) this.orphans.set(shardId, region);
  }

  shardStarted(fx: Effects, region: string, shardId: number): void {
    const from = this.orphans.get(shardId);
    if (from === undefined || from === region) return;
    for (const [orphan, previous] of [...this.orphans]) if (previous === from) this.orphans.delete(orphan);
    fx.report({ kind: 'failover-step', member: from, phase: 're-homed' });
  }
}

// The down-removal margin (Pekko's down-removal-margin): when each member was downed, and the timer that re-runs
// the membership check when the earliest running margin ends. A node downed by the others may not know it yet
// and keeps running its shards until gossip tells it, so for marginMs after the downing was decided they are
// not started elsewhere. The margin runs from the decision (`MemberInfo.downedAtMs`, the deciding node's wall
// clock, earliest decision wins), never from when this coordinator heard of it: a coordinator that starts, or
// learns of the downing, late waits only the rest. Without a decision time (a peer that predates it, or a
// member gone from the view) it runs from when this coordinator saw the member down or gone. A decision time
// ahead of this coordinator's clock counts as now: the margin never starts after the coordinator saw the down.
// The margin exists for a process that may still run; one whose address refuses connections (a confirmed death,
// death-confirmation.ts) runs nothing, so its margin ends once the coordinator's own probes confirm it, or at
// once when this node's membership did already (MemberInfo.confirmedDead, probed when its connections closed).
// Older members gone from the view are dated from what the cluster saw of their leaving (olderMembersGoneSince).

export interface DownRemovalMarginOptions {
  /** A member's death was confirmed (its margin ends now): the coordinator re-runs its membership check. */
  readonly confirmed: () => void;
  /** Probes a member's address (CoordinatorConfig.probe, Transport.probe); without it every margin runs its full length. */
  readonly probe?: (to: NodeAddress) => Promise<ProbeResult>;
}

/** The key of the margin's timer among the dispatcher's timers. */
const MARGIN_TIMER = 'down-removal-margin';

export class DownRemovalMargin {
  private readonly downSince = new Map<string, number>();
  private stopped = false;
  /** Members whose process is confirmed gone: no margin for them. */
  private readonly proven = new Set<string>();
  /** Members whose running margin a new process at the same address outlived (see liveAgain). */
  private readonly superseded = new Set<string>();
  private readonly deaths: DeathConfirmations;

  constructor(
    private readonly marginMs: number,
    private readonly scheduler: Scheduler,
    options: DownRemovalMarginOptions,
  ) {
    // The probes' own timers are DeathConfirmations' (cluster/); a confirmation comes back as an input.
    this.deaths = new DeathConfirmations({
      probe: marginMs > 0 ? options.probe : undefined,
      scheduler,
      onConfirmed: (member) => {
        this.proven.add(member);
        if (!this.stopped) options.confirmed();
      },
    });
  }

  /**
   * Members this view shows down start their margin when their downing was decided (or now, without a
   * decision time), unless it started earlier. Margins are kept by address, and a restarted process keeps its
   * address: the newest downing among an address's down records counts, none while a process there is live
   * (a down record beside it is the process before, gone since the live one holds the port), and a margin
   * that started before a process was live there again is that earlier process's (`liveAgain`).
   */
  sawDown(members: Iterable<MemberInfo>, now: number): void {
    const newest = new Map<string, { readonly since: number; readonly confirmed: boolean }>();
    const live = new Set<string>();
    for (const member of members) {
      const key = member.address.toString();
      if (!isGone(member.status)) live.add(key);
      else if (member.status === 'down') {
        const since = Math.min(now, member.downedAtMs ?? now);
        // The newest downing counts, confirmed only when every record here is: decision times come from whichever
        // leader decided, so the newest by time need not be the current process's (whose margin it is).
        const { since: before = -Infinity, confirmed = true } = newest.get(key) ?? {};
        newest.set(key, { since: Math.max(since, before), confirmed: member.confirmedDead === true && confirmed });
      }
    }
    for (const key of live) if (this.downSince.has(key)) this.liveAgain(key, now);
    for (const [key, { since, confirmed }] of newest) if (!live.has(key)) this.started(key, since, confirmed);
  }

  /**
   * A process is live at an address whose margin started before: an ended margin is forgotten, a running one
   * runs on (the live process holds the port, but its end is kept) and is superseded by the next downing there.
   */
  private liveAgain(member: string, now: number): void {
    if (this.inMargin(member, now)) {
      this.superseded.add(member);
      return;
    }
    this.downSince.delete(member);
    this.proven.delete(member);
    this.superseded.delete(member);
  }

  /**
   * A member gone from the view (or down, or removed) while its region still held shards it did not hand
   * off: downed by the others, whether this view shows it down or, the leader having removed it in the same
   * gossip round, not at all any more. Its margin starts at `since` (now, or when it was seen leaving) unless
   * it started earlier.
   */
  sawGone(member: string, since: number): void {
    this.started(member, since);
  }

  /**
   * The earliest start known for a member's margin wins (a later view may carry the decision time), except
   * after a new process was live at the address: its downing starts a margin of its own, never ending before
   * the running one.
   */
  private started(member: string, since: number, confirmed = false): void {
    const known = this.downSince.get(member);
    if (this.superseded.delete(member)) {
      this.proven.delete(member);
      this.downSince.set(member, Math.max(since, known ?? since));
    } else if (known === undefined || since < known) this.downSince.set(member, since);
    // This node's membership has the evidence the margin's own probes would gather (MemberInfo.confirmedDead).
    if (confirmed) this.proven.add(member);
    if (!this.proven.has(member) && this.inMargin(member, this.scheduler.now())) {
      const address = parseAddress(member);
      if (address !== undefined) this.deaths.suspect(member, address);
    }
  }

  /** True once a margin for the member started (running or ended, until forgotten). */
  has(member: string): boolean {
    return this.downSince.has(member);
  }

  /** True while `member` was seen down less than marginMs ago. */
  inMargin(member: string, now: number): boolean {
    const since = this.downSince.get(member);
    return since !== undefined && !this.proven.has(member) && now < since + this.marginMs;
  }

  /** True while a member for which `matches` holds is in its margin. */
  anyInMargin(matches: (member: string) => boolean, now: number): boolean {
    for (const member of this.downSince.keys()) if (matches(member) && this.inMargin(member, now)) return true;
    return false;
  }

  /**
   * Arms the timer for the earliest margin still running (its `margin-ended` re-runs the membership check),
   * and forgets the ended margins of members for which `forgettable` holds (gone from both the view and the
   * registry: nothing refers to them any more).
   */
  schedule(fx: Effects, now: number, forgettable: (member: string) => boolean): void {
    fx.cancelTimer(MARGIN_TIMER);
    let next = Infinity;
    for (const [member, since] of [...this.downSince]) {
      const end = this.proven.has(member) ? now : since + this.marginMs;
      if (end > now) {
        next = Math.min(next, end);
        // Still running: probe again (at most once a second) until confirmed or the margin ends.
        const address = parseAddress(member);
        if (address !== undefined) this.deaths.suspect(member, address);
      } else if (forgettable(member)) {
        this.downSince.delete(member);
        this.proven.delete(member);
        this.superseded.delete(member);
      }
    }
    if (next === Infinity || this.stopped) return;
    fx.startTimer(MARGIN_TIMER, next - now, { type: 'margin-ended' });
  }

  /** Probes no more, confirms nothing more (the dispatcher cancels its timer). */
  stop(): void {
    this.stopped = true;
    this.deaths.stop();
  }
}

function parseAddress(member: string): NodeAddress | undefined {
  try {
    return NodeAddress.parse(member);
  } catch {
    return undefined;
  }
}

/** The margin's key for older members that left the view (their records gone: removed or pruned). */
export const UNTRACED_OLDER_MEMBERS = '(older members no longer in the view)';

/**
 * When the margin for older members gone from the view starts, or undefined when none is. Up numbers are handed
 * out in join order, so a gap below this node's own means an older member left; it may have been the previous
 * coordinator's node, hosting shards nobody registered. A gap this node saw leave (`departed`, the cluster's
 * local record) is dated by its downing's decision, or without one (a graceful leave, an old peer's downing) by
 * when this node saw it go, which is later; a gap it knows nothing of starts now (the downing, if there was
 * one, was decided no later than that). No start is after now, and the latest start wins: every gap's margin
 * must be over before shards nobody registered are allocated.
 */
export function olderMembersGoneSince(
  members: ReadonlyArray<MemberInfo>,
  departed: ReadonlyArray<DepartedMember>,
  self: string,
  now: number,
): number | undefined {
  const own = members.find((m) => m.address.toString() === self);
  if (own === undefined || own.upNumber <= 1) return undefined;
  const seen = new Set(members.map((m) => m.upNumber));
  const left = new Map<number, number>();
  for (const d of departed) {
    const since = Math.min(now, d.downedAtMs ?? d.removedAtMs);
    // Two departures with one Up number (concurrent leaders): the later start is the safe one.
    left.set(d.upNumber, Math.max(since, left.get(d.upNumber) ?? -Infinity));
  }
  let latest: number | undefined;
  for (let n = 1; n < own.upNumber; n++) {
    if (seen.has(n)) continue;
    const since = left.get(n) ?? now;
    latest = latest === undefined ? since : Math.max(latest, since);
    if (latest === now) return now;
  }
  return latest;
}
