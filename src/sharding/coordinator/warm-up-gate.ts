// The warm-up and partition gate: a coordinator gives a never-heard-of shard a home only once it has heard
// from every region that may run it. It waits for the regions of reachable members to register (bounded by
// the warm-up time), and for unreachable or just-downed members that have not registered, since they may run
// shards this coordinator never heard of. Operator actions that need the full map wait here; shards asked for
// meanwhile wait in the coordinator's state (status `waiting`, reason `warm-up`).
import type { Cancellable, Scheduler } from '../../cluster/scheduler.js';
import type { Logger } from '../../logging.js';
import { hasRole } from './membership.js';
import { HOSTING_STATUSES, type MemberInfo } from '../../cluster/member.js';

export interface WarmUpGateOptions {
  readonly role: string | undefined;
  readonly warmupMs: number;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
}

/** What the gate reads and whom it tells (wired in rooms.ts). */
export interface WarmUpGatePort {
  /** The cluster's members as this node sees them now (ShardingContext.membership). */
  members(): ReadonlyArray<MemberInfo>;
  /** A region or proxy of this type registered from that address (CoordinatorState.isRegistered). */
  isRegistered(address: string): boolean;
  /** True while a member downed recently (DownRemovalMargin running) has not registered. */
  downedUnregistered(): boolean;
  /** The coordinator became warm, before the actions queued with whenWarm run (ShardCoordinator's onWarm). */
  warm(reason: string): void;
}

export class WarmUpGate {
  private warm = false;
  private stopped = false;
  private timer: Cancellable | undefined;
  /** Operator requests that arrived during warm-up (their answers need the full map). */
  private readonly afterWarmup: Array<() => void> = [];
  /** Members last seen unreachable and unregistered. */
  private readonly awaitedUnreachable = new Set<string>();

  constructor(
    private readonly options: WarmUpGateOptions,
    private readonly port: WarmUpGatePort,
  ) {}

  get isWarm(): boolean {
    return this.warm;
  }

  /** Starts the warm-up clock; ends it at once if every expected region already registered. */
  start(): void {
    this.restartTimer();
    for (const key of this.unregisteredUnreachable()) this.awaitedUnreachable.add(key);
    this.check();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Becomes warm once every expected region registered. */
  check(): void {
    if (this.warm || this.stopped) return;
    if (this.expectedRegions().every((address) => this.port.isRegistered(address)))
      this.becomeWarm('every region registered');
  }

  /** Runs the action now if warm, else once warm. */
  whenWarm(action: () => void): void {
    if (this.warm) action();
    else this.afterWarmup.push(action);
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
    return this.unregisteredUnreachable().length > 0 || this.port.downedUnregistered();
  }

  /**
   * A member that was unreachable and unregistered is reachable again: its region is about to register the
   * shards it kept running, so the coordinator waits for it once more (bounded by the warm-up time) before
   * it allocates shards it has never heard of. Returns the members to ask to register.
   */
  trackReturningMembers(): string[] {
    const unreachable = new Set(this.unregisteredUnreachable());
    const expected = new Set(this.expectedRegions());
    const returning = [...this.awaitedUnreachable].filter(
      (key) => !unreachable.has(key) && expected.has(key) && !this.port.isRegistered(key),
    );
    this.awaitedUnreachable.clear();
    for (const key of unreachable) this.awaitedUnreachable.add(key);
    if (returning.length === 0 || !this.warm || this.stopped) return [];
    this.warm = false;
    this.options.logger.info({ members: returning }, 'unregistered members reachable again: waiting for their regions');
    this.restartTimer();
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
      .filter((m) => !m.reachable && !this.port.isRegistered(m.address.toString()))
      .map((m) => m.address.toString());
  }

  private mayHost(): MemberInfo[] {
    return this.port.members().filter((m) => HOSTING_STATUSES.has(m.status) && hasRole(m, this.options.role));
  }

  private becomeWarm(reason: string): void {
    if (this.warm || this.stopped) return;
    this.warm = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.port.warm(reason);
    for (const action of this.afterWarmup.splice(0)) action();
  }

  private restartTimer(): void {
    this.timer?.cancel();
    this.timer = this.options.scheduler.setTimeout(() => {
      this.timer = undefined;
      this.becomeWarm('warm-up time elapsed');
    }, this.options.warmupMs);
  }
}
