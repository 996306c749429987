// Test helper for the coordinator's rooms: the manual scheduler of test/support/ (time moves only when the
// test says so), a hand-off factory, member records, and a ShardingContext that records what the coordinator sends.
import { NodeAddress } from '../../src/cluster/address.js';
import type { MemberInfo, MemberStatus, Membership } from '../../src/cluster/member.js';
import { resolveShardingConfig, type ShardingConfig } from '../../src/sharding/config.js';
import { HandOff, type HandOffPhase } from '../../src/sharding/coordinator/hand-off.js';
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
