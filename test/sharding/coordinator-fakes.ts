// Test helper for the coordinator's parts: the manual scheduler of test/support/ (time moves only when the
// test says so), states built through their events, member records, a ShardingContext that records what the coordinator
// sends, and a coordinator started on them with every live member registered.
import { PROTOCOL_VERSION } from '../../src/cluster/transport/wire-message.js';
import { NodeAddress } from '../../src/cluster/address.js';
import { isGone, type MemberInfo, type MemberStatus, type Membership } from '../../src/cluster/member.js';
import type { Scheduler } from '../../src/cluster/scheduler.js';
import { silentLogger } from '../../src/logging.js';
import { resolveShardingConfig, type ShardingConfig } from '../../src/sharding/core/config.js';
import { ShardCoordinator, type CoordinatorConfig } from '../../src/sharding/coordinator/shard-coordinator.js';
import { type HandOffCause, CoordinatorState } from '../../src/sharding/coordinator/state.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/index.js';
import type { ShardingMessage } from '../../src/sharding/protocol/messages.js';
import type { ShardingContext } from '../../src/sharding/core/sharding-context.js';
import { memberInfo, staticMembership, testAddress } from '../support/members.js';
import { ManualScheduler } from '../support/schedulers.js';

export { ManualScheduler };

export function address(port: number): string {
  return testAddress(port).toString();
}

export function member(
  port: number,
  status: MemberStatus = 'up',
  extra: Partial<Pick<MemberInfo, 'reachable' | 'roles'>> = {},
): MemberInfo {
  return memberInfo({ address: testAddress(port), status, upNumber: port, ...extra, roles: extra.roles ?? [] });
}

/**
 * A coordinator state built through its events: `regions` registered (and `proxies`), each of `homes`
 * allocated to its region, the `leaving` regions leaving.
 */
export function stateWith(
  regions: ReadonlyArray<string>,
  homes: Iterable<readonly [shardId: number, region: string]> = [],
  extra: { proxies?: ReadonlyArray<string>; leaving?: ReadonlyArray<string> } = {},
): CoordinatorState {
  const state = new CoordinatorState(() => 0);
  for (const region of regions) state.apply({ type: 'RegionRegistered', region });
  for (const region of extra.proxies ?? []) state.apply({ type: 'ProxyRegistered', region });
  for (const [shardId, region] of homes) state.apply({ type: 'ShardAllocated', shardId, region });
  for (const region of extra.leaving ?? []) state.apply({ type: 'RegionLeaving', region });
  return state;
}

/** Starts a hand-off of `shardId` in `state`, as HandOffs would (id 1 unless told). */
export function startHandOff(
  state: CoordinatorState,
  shardId: number,
  owner: string,
  extra: { id?: number; phase?: 'begin' | 'handoff'; acks?: string[]; cause?: HandOffCause } = {},
): void {
  const { id = 1, phase = 'begin', acks = [], cause = 'rebalance' } = extra;
  state.apply({
    type: 'HandOffStarted',
    shardId,
    handOff: { id, owner, phase, pendingAcks: acks, startedAtMs: 0, cause },
  });
}

/** A RegisterRegion of type 'T' hosting `shards`, stopping and keeping nothing unless `extra` says otherwise. */
export function registration(
  shards: number[] = [],
  extra: { stopping?: number[]; retained?: Array<{ shardId: number; handOffId: number }> } = {},
): Extract<ShardingMessage, { type: 'RegisterRegion' }> {
  return { type: 'RegisterRegion', typeName: 'T', proxy: false, shards, stopping: [], retained: [], ...extra };
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
  /** The protocol every peer agreed with this node (this release's unless a test says otherwise). */
  protocol = PROTOCOL_VERSION;

  constructor(
    public members: MemberInfo[],
    config: Partial<ShardingConfig> = {},
    readonly scheduler: Scheduler = new ManualScheduler(),
  ) {
    this.config = resolveShardingConfig(config);
    const first = members[0];
    this.self = first?.address ?? NodeAddress.parse('test@127.0.0.1:1');
    this.selfKey = this.self.toString();
    this.membership = staticMembership(this.self, () => this.members);
  }

  send(to: string, message: ShardingMessage): void {
    this.sent.push({ to, message });
  }

  reply(): void {
    throw new Error('the coordinator never replies to entity asks');
  }

  protocolWith(_to: string): number {
    return this.protocol;
  }

  /** What was sent since the last call, then forgets it. */
  take(): Sent[] {
    return this.sent.splice(0);
  }
}

/**
 * A coordinator of type 'T' (10 shards, least-shard strategy unless `settings` says otherwise) on a recorded
 * context and `scheduler`, started, with every member that is not gone registered as a region without
 * shards; what it sent until then is taken.
 */
export function startedCoordinator(
  members: MemberInfo[],
  config: Partial<ShardingConfig>,
  settings: Partial<CoordinatorConfig> = {},
  scheduler = new ManualScheduler(),
): { subject: ShardCoordinator; ctx: FakeContext; scheduler: ManualScheduler } {
  const ctx = new FakeContext(members, config, scheduler);
  const subject = new ShardCoordinator(
    { typeName: 'T', numberOfShards: 10, role: undefined, strategy: new LeastShardAllocationStrategy(), ...settings },
    ctx,
    silentLogger(),
  );
  subject.start();
  for (const m of members.filter((x) => !isGone(x.status))) subject.handle(m.address.toString(), registration());
  ctx.take();
  return { subject, ctx, scheduler };
}
