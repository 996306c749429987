// Test helper for the coordinator's rooms: the manual scheduler of test/support/ (time moves only when the
// test says so), a hand-off factory, member records, a ShardingContext that records what the coordinator
// sends, and a coordinator started on them with every live member registered.
import { NodeAddress } from '../../src/cluster/address.js';
import { isGone, type MemberInfo, type MemberStatus, type Membership } from '../../src/cluster/member.js';
import { silentLogger } from '../../src/logging.js';
import { resolveShardingConfig, type ShardingConfig } from '../../src/sharding/config.js';
import { HandOff, type HandOffPhase } from '../../src/sharding/coordinator/hand-off.js';
import { ShardCoordinator, type CoordinatorConfig } from '../../src/sharding/coordinator/shard-coordinator.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/index.js';
import type { ShardingMessage } from '../../src/sharding/protocol/messages.js';
import type { ShardingContext } from '../../src/sharding/sharding-context.js';
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

  constructor(
    public members: MemberInfo[],
    config: Partial<ShardingConfig> = {},
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
  const ctx = new FakeContext(members, config);
  const subject = new ShardCoordinator(
    { typeName: 'T', numberOfShards: 10, role: undefined, strategy: new LeastShardAllocationStrategy(), ...settings },
    ctx,
    silentLogger(),
    scheduler,
  );
  subject.start();
  for (const m of members.filter((x) => !isGone(x.status))) subject.handle(m.address.toString(), registration());
  ctx.take();
  return { subject, ctx, scheduler };
}
