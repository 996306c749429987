// A node that just came Up registers before the coordinator's node has heard of the join: the registration is
// ignored (it is not a member there yet) and, once the membership lists the node, the coordinator asks it to
// register again at once, instead of leaving it without a coordinator until its next retry a retry interval later.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logging.js';
import { EarlyRegistrations, MAX_EARLY_REGISTRATIONS } from '../../src/sharding/coordinator/state.js';
import { memberMap } from '../../src/sharding/coordinator/membership.js';
import { ShardCoordinator } from '../../src/sharding/coordinator/shard-coordinator.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/index.js';
import { FakeContext, address, member, registration } from './coordinator-fakes.js';

const [A, B, C] = [address(1), address(2), address(3)];

function coordinator() {
  const ctx = new FakeContext([member(1), member(2)], {
    retryIntervalMs: 2_000,
    coordinatorWarmupMs: 500,
    rebalanceIntervalMs: 1_000_000,
  });
  const subject = new ShardCoordinator(
    { typeName: 'T', numberOfShards: 10, role: undefined, strategy: new LeastShardAllocationStrategy() },
    ctx,
    silentLogger(),
  );
  subject.start();
  for (const from of [A, B]) subject.handle(from, registration());
  ctx.take();
  return { subject, ctx };
}

describe('registrations that arrive before the join', () => {
  it('asks the new member to register again the moment the membership lists it, then accepts it', () => {
    const { subject, ctx } = coordinator();
    subject.handle(C, registration());
    expect(ctx.take()).toEqual([]);

    ctx.members = [...ctx.members, member(3)];
    subject.onMembershipChange();
    expect(ctx.take()).toEqual([{ to: C, message: { type: 'RegisterRequired', typeName: 'T' } }]);
    subject.handle(C, registration());
    expect(ctx.take()).toContainEqual({ to: C, message: { type: 'RegisterAck', typeName: 'T' } });
    expect(subject.stats().regions).toBe(3);

    // Asked once: later membership changes do not repeat it.
    subject.onMembershipChange();
    expect(ctx.take().filter((sent) => sent.to === C)).toEqual([]);
  });

  it('does not remember a member that is down or removed', () => {
    const { subject, ctx } = coordinator();
    ctx.members = [...ctx.members, member(3, 'down')];
    subject.handle(C, registration());
    ctx.members = [member(1), member(2), member(3)];
    subject.onMembershipChange();
    expect(ctx.take().filter((sent) => sent.to === C)).toEqual([]);
  });

  it('remembers a bounded number of non-members', () => {
    const early = new EarlyRegistrations();
    for (let port = 10; port < 10 + 2 * MAX_EARLY_REGISTRATIONS; port++) early.note(address(port));
    expect(early.size).toBe(MAX_EARLY_REGISTRATIONS);
    expect(early.admitted(memberMap([member(10), member(11, 'removed')]))).toEqual([address(10)]);
    expect(early.size).toBe(MAX_EARLY_REGISTRATIONS - 1);
  });
});
