// How the coordinator reads the membership: the role filter and members by key (which statuses may host is the
// vocabulary's HOSTING_STATUSES). One place, so the registry, the warm-up gate and allocation agree. Below it,
// what the coordinator does with the membership: the warm-up and partition gate, and the failover report.
import { type MemberInfo, HOSTING_STATUSES } from '../../cluster/member.js';
import type { Logger } from '../../logging.js';
import type { DownRemovalMargin } from './down-removal-margin.js';
import type { Effects } from './effects.js';
import type { CoordinatorState } from './state.js';

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
