// Test helper for the coordinator's rooms: a scheduler whose time moves only when the test says so, a
// hand-off factory, member records, and a ShardingContext that records what the coordinator sends.
import { NodeAddress } from '../../src/cluster/address.js';
import type { MemberInfo, MemberStatus, Membership } from '../../src/cluster/member.js';
import type { Cancellable, Scheduler } from '../../src/cluster/scheduler.js';
import { resolveShardingConfig, type ShardingConfig } from '../../src/sharding/config.js';
import { HandOff, type HandOffPhase } from '../../src/sharding/coordinator/hand-off.js';
import type { ShardingMessage } from '../../src/sharding/messages.js';
import type { ShardingContext } from '../../src/sharding/shard-region.js';

interface Timer {
  at: number;
  readonly every: number | undefined;
  readonly fn: () => void;
}

/** Timers fire only inside advance(), in due-time order (creation order on ties), at their due time. */
export class ManualScheduler implements Scheduler {
  private time = 1_000;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, delayMs: number): Cancellable {
    return this.add({ at: this.time + delayMs, every: undefined, fn });
  }

  setInterval(fn: () => void, intervalMs: number): Cancellable {
    return this.add({ at: this.time + intervalMs, every: intervalMs, fn });
  }

  /** Timers not yet fired or cancelled (intervals count until cancelled). */
  get pending(): number {
    return this.timers.size;
  }

  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      let due: [number, Timer] | undefined;
      for (const entry of this.timers) if (entry[1].at <= target && (due === undefined || entry[1].at < due[1].at)) due = entry;
      if (due === undefined) break;
      const [id, timer] = due;
      this.time = timer.at;
      if (timer.every === undefined) this.timers.delete(id);
      else timer.at += timer.every;
      timer.fn();
    }
    this.time = target;
  }

  private add(timer: Timer): Cancellable {
    const id = this.nextId++;
    this.timers.set(id, timer);
    return { cancel: () => void this.timers.delete(id) };
  }
}

export function address(port: number): string {
  return NodeAddress.parse(`test@127.0.0.1:${port}`).toString();
}

export function member(port: number, status: MemberStatus = 'up', extra: Partial<Pick<MemberInfo, 'reachable' | 'roles'>> = {}): MemberInfo {
  return {
    address: NodeAddress.parse(`test@127.0.0.1:${port}`),
    status,
    appVersion: '1.0.0',
    upNumber: port,
    reachable: extra.reachable ?? true,
    roles: extra.roles ?? [],
  };
}

/** A hand-off whose timeouts are recorded in `timedOut`. */
export function makeHandOff(
  scheduler: ManualScheduler,
  spec: { shardId: number; owner: string; id?: number; phase?: HandOffPhase; acks?: string[]; timeoutMs?: number },
  timedOut: HandOff[] = [],
): HandOff {
  return new HandOff(spec.shardId, spec.id ?? 1, spec.owner, spec.phase ?? 'begin', spec.acks ?? [], {
    scheduler,
    timeoutMs: spec.timeoutMs ?? 1_000,
    onTimeout: (handOff) => timedOut.push(handOff),
  });
}

export interface Sent {
  readonly to: string;
  readonly message: ShardingMessage;
}

/** A ShardingContext over a settable member list; sends are recorded, never delivered. */
export class FakeContext implements ShardingContext {
  readonly sent: Sent[] = [];
  readonly config: ShardingConfig;
  readonly self: NodeAddress;
  readonly selfKey: string;
  readonly membership: Membership;

  constructor(
    public members: MemberInfo[],
    config: Partial<ShardingConfig> = {},
  ) {
    this.config = resolveShardingConfig(config);
    const first = members[0];
    this.self = first?.address ?? NodeAddress.parse('test@127.0.0.1:1');
    this.selfKey = this.self.toString();
    this.membership = {
      self: this.self,
      members: () => this.members,
      onChange: () => () => undefined,
      onLeaving: () => () => undefined,
    };
  }

  send(to: string, message: ShardingMessage): void {
    this.sent.push({ to, message });
  }

  reply(): void {
    throw new Error('the coordinator never replies to entity asks');
  }

  /** What was sent since the last call, then forgets it. */
  take(): Sent[] {
    return this.sent.splice(0);
  }
}
