// A controllable cluster membership shared by several in-process nodes. Every node's view changes at the
// same instant, listeners run synchronously, and graceful leave runs the registered onLeaving tasks.
import { NodeAddress } from '../../src/cluster/address.js';
import type { MemberInfo, MemberStatus, Membership } from '../../src/cluster/member.js';
import { memberInfo } from './members.js';

export interface MemberSpec {
  readonly roles?: ReadonlyArray<string>;
  readonly status?: MemberStatus;
  readonly appVersion?: string;
}

export class FakeCluster {
  private readonly members = new Map<string, MemberInfo>();
  private readonly listeners = new Set<() => void>();
  private readonly leaveTasks = new Map<string, Set<() => Promise<void>>>();
  private nextUpNumber = 1;

  add(address: NodeAddress | string, spec: MemberSpec = {}): NodeAddress {
    const node = typeof address === 'string' ? NodeAddress.parse(address) : address;
    this.members.set(
      node.toString(),
      memberInfo({ ...spec, address: node, upNumber: this.nextUpNumber++, roles: spec.roles ?? [] }),
    );
    this.notify();
    return node;
  }

  list(): ReadonlyArray<MemberInfo> {
    return [...this.members.values()];
  }

  setStatus(address: NodeAddress, status: MemberStatus): void {
    this.update(address, { status });
  }

  setReachable(address: NodeAddress, reachable: boolean): void {
    this.update(address, { reachable });
  }

  /** Every node's membership probed the member's address to death (MemberInfo.confirmedDead), then downed it. */
  confirmDead(address: NodeAddress): void {
    this.update(address, { status: 'down', reachable: false, confirmedDead: true });
  }

  /** Drops the member from every view (Pekko's MemberRemoved). */
  remove(address: NodeAddress): void {
    this.members.delete(address.toString());
    this.notify();
  }

  /** Graceful leave: leaving -> onLeaving tasks -> exiting -> removed, as the cluster runs it. */
  async leave(address: NodeAddress): Promise<void> {
    this.setStatus(address, 'leaving');
    await Promise.all([...(this.leaveTasks.get(address.toString()) ?? [])].map((task) => task()));
    this.setStatus(address, 'exiting');
    this.remove(address);
  }

  membership(self: NodeAddress): Membership {
    return {
      self,
      members: () => this.list(),
      onChange: (listener) => {
        const entry = (): void => listener();
        this.listeners.add(entry);
        return () => this.listeners.delete(entry);
      },
      onLeaving: (task) => {
        const key = self.toString();
        const tasks = this.leaveTasks.get(key) ?? new Set();
        this.leaveTasks.set(key, tasks);
        tasks.add(task);
        return () => tasks.delete(task);
      },
    };
  }

  private update(
    address: NodeAddress,
    patch: Partial<Pick<MemberInfo, 'status' | 'reachable' | 'confirmedDead'>>,
  ): void {
    const member = this.members.get(address.toString());
    if (member === undefined) throw new Error(`no member ${address.toString()}`);
    this.members.set(address.toString(), { ...member, ...patch });
    this.notify();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
