// Cluster membership over an in-memory network with fake timers: join, downing, partitions, leave, faults.
import { describe, expect, it, vi } from 'vitest';
import { Cluster, type SelfDownCause } from '../../src/cluster/membership/cluster.js';
import { memberKey, toWire, type GossipState } from '../../src/cluster/membership/gossip.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { address, advanceUntil, allUp, createNode, statusOf, upNumbers, type TestNode } from './cluster-harness.js';
import { useFakeTime } from '../support/fake-time.js';

let nodes: TestNode[] = [];
useFakeTime(() => {
  for (const n of nodes) n.cluster.shutdown();
  nodes = [];
});

/** Starts nodes 1..count one after another, each fully Up before the next starts. */
async function startInOrder(network: MemoryNetwork, count: number, config = {}): Promise<TestNode[]> {
  const started: TestNode[] = [];
  for (let i = 1; i <= count; i++) {
    const node = createNode(network, i, config);
    nodes.push(node);
    started.push(node);
    node.cluster.start();
    let up = false;
    void node.cluster.whenUp().then(() => {
      up = true;
    });
    await advanceUntil(() => up, `node ${i} up`);
  }
  await advanceUntil(() => allUp(started), 'all up and reachable everywhere');
  return started;
}

describe('Cluster: joining', () => {
  it('forms a cluster on the only seed at once and joins 5 nodes with upNumbers in join order', async () => {
    const network = new MemoryNetwork({ seed: 1 });
    const started = await startInOrder(network, 5);
    for (const n of started) {
      expect(upNumbers(n.cluster)).toEqual({ 1: 1, 2: 2, 3: 3, 4: 4, 5: 5 });
      expect(n.cluster.leader()?.equals(address(1))).toBe(true);
    }
    await advanceUntil(() => started.every((n) => n.cluster.isConverged()), 'convergence');
    const views = started.map((n) => JSON.stringify(n.cluster.members()));
    expect(new Set(views).size).toBe(1);
  });

  it('joins nodes started at the same time and gives each a distinct upNumber', async () => {
    const network = new MemoryNetwork({ seed: 2 });
    nodes = [1, 2, 3, 4].map((i) => createNode(network, i));
    for (const n of nodes) n.cluster.start();
    await advanceUntil(() => allUp(nodes), 'all up');
    const numbers = Object.values(upNumbers(nodes[0]!.cluster)).sort();
    expect(numbers).toEqual([1, 2, 3, 4]);
    expect(upNumbers(nodes[0]!.cluster)[1]).toBe(1);
    for (const n of nodes) expect(upNumbers(n.cluster)).toEqual(upNumbers(nodes[0]!.cluster));
  });

  it('lets the first of several seeds form the cluster only after seedNodeTimeoutMs, never another seed', async () => {
    const network = new MemoryNetwork();
    const seeds = [address(1), address(2)];
    const second = createNode(network, 2, { seedNodes: seeds, seedNodeTimeoutMs: 5_000 });
    nodes.push(second);
    second.cluster.start();
    await vi.advanceTimersByTimeAsync(20_000);
    expect(second.cluster.selfMember()).toBeUndefined();

    const first = createNode(network, 1, { seedNodes: seeds, seedNodeTimeoutMs: 5_000 });
    nodes.push(first);
    first.cluster.start();
    // The second seed's join retries reach the first seed, which is not in a cluster yet and ignores them.
    await vi.advanceTimersByTimeAsync(4_900);
    expect(first.cluster.selfMember()).toBeUndefined();
    await advanceUntil(() => allUp([first, second]), 'both up');
    expect(upNumbers(first.cluster)).toEqual({ 1: 1, 2: 2 });
  });

  it('rejects whenUp when the node stops before it was Up', async () => {
    const network = new MemoryNetwork();
    const lonely = createNode(network, 2); // its seed never starts
    nodes.push(lonely);
    lonely.cluster.start();
    const up = lonely.cluster.whenUp();
    await vi.advanceTimersByTimeAsync(3_000);
    lonely.cluster.shutdown();
    await expect(up).rejects.toThrow(/stopped before it was Up/);
  });

  it('downs the old incarnation when a node restarts with a new one', async () => {
    const network = new MemoryNetwork();
    const started = await startInOrder(network, 3);
    const old = started[2]!;
    old.cluster.shutdown();
    await old.transport.close();
    const restarted = createNode(network, 3, {}, 'inc-3-restarted');
    nodes.push(restarted);
    restarted.cluster.start();
    await advanceUntil(
      () =>
        [started[0]!, started[1]!, restarted].every(
          (n) => n.cluster.members().length === 3 && n.cluster.members().every((m) => m.status === 'up'),
        ),
      'restarted node up, old incarnation removed',
    );
    expect(upNumbers(started[0]!.cluster)[3]).toBe(4);
  });
});

describe('Cluster: failure detection and downing', () => {
  it('without death confirmation: marks a crashed member unreachable, downs it after downAfterMs on the majority side, then removes it', async () => {
    const network = new MemoryNetwork();
    const [n1, n2, n3] = await startInOrder(network, 3, { confirmDeaths: false });
    const events: string[] = [];
    n1!.cluster.onChange(() => {
      const m = n1!.cluster.members().find((x) => x.address.equals(address(3)));
      events.push(m ? `${m.status}:${m.reachable ? 'reachable' : 'unreachable'}` : 'gone');
    });
    n3!.cluster.shutdown();
    await n3!.transport.close();
    const crashAt = Date.now();

    await advanceUntil(
      () => n1!.cluster.members().find((m) => m.address.equals(address(3)))?.reachable === false,
      'unreachable',
    );
    const unreachableAt = Date.now();
    expect(unreachableAt - crashAt).toBeLessThan(10_000);
    await vi.advanceTimersByTimeAsync(9_000);
    expect(statusOf(n1!.cluster, address(3))).toBe('up');
    await advanceUntil(() => statusOf(n1!.cluster, address(3)) === undefined, 'removed', 5_000);
    expect(Date.now() - unreachableAt).toBeGreaterThanOrEqual(10_000);
    expect(events).toEqual(['up:unreachable', 'down:unreachable', 'gone']);
    await advanceUntil(() => statusOf(n2!.cluster, address(3)) === undefined, 'removed on n2');
    expect(n1!.cluster.members().map((m) => m.status)).toEqual(['up', 'up']);
  });

  it('prunes a removed incarnation from the gossip after removedRetentionMs, and keeps it out', async () => {
    const network = new MemoryNetwork();
    const config = { removedRetentionMs: 5_000 };
    const started = await startInOrder(network, 3, config);
    for (let restart = 1; restart <= 3; restart++) {
      const previous = nodes[nodes.length - 1]!;
      previous.cluster.shutdown();
      await previous.transport.close();
      const next = createNode(network, 3, config, `inc-3-restart-${restart}`);
      nodes.push(next);
      next.cluster.start();
      await advanceUntil(() => allUp([started[0]!, started[1]!, next]), `restart ${restart} up`);
    }
    const live = [started[0]!, started[1]!, nodes[nodes.length - 1]!];
    await advanceUntil(
      () => live.every((n) => n.cluster.gossipSize().records === 3 && n.cluster.gossipSize().tombstones === 3),
      'three old incarnations pruned everywhere',
    );

    // An old copy of the state, still carrying the first incarnation as Up, changes nothing.
    const n1 = started[0]!;
    const stale: GossipState = {
      members: new Map([
        [
          memberKey(address(1), 'inc-1'),
          { address: address(1), incarnation: 'inc-1', status: 'up', appVersion: '1.0.0', roles: [], upNumber: 1 },
        ],
        [
          memberKey(address(3), 'inc-3'),
          { address: address(3), incarnation: 'inc-3', status: 'up', appVersion: '1.0.0', roles: [], upNumber: 3 },
        ],
      ]),
      seen: new Set(),
      tombstones: new Map(),
    };
    started[1]!.transport.send(address(1), { type: 'Gossip', gossip: toWire(stale) });
    live[2]!.transport.send(address(1), { type: 'Join', incarnation: 'inc-3', appVersion: '1.0.0', roles: [] });
    await vi.advanceTimersByTimeAsync(3_000);
    expect(n1.cluster.gossipSize()).toEqual({ records: 3, tombstones: 3 });
    expect(n1.cluster.members().map((m) => m.status)).toEqual(['up', 'up', 'up']);
  });

  it('under partition, the minority downs itself before the majority downs it, and the majority carries on', async () => {
    const network = new MemoryNetwork();
    const started = await startInOrder(network, 5);
    const [n1, n2, n3, n4, n5] = started;
    const timeline: string[] = [];
    const causes: SelfDownCause[] = [];
    for (const n of [n4!, n5!]) {
      n.cluster.onSelfDown((cause) => {
        causes.push(cause);
        timeline.push(`self-down ${n.address.port - 2550}`);
      });
    }
    n1!.cluster.onChange(() => {
      if (statusOf(n1!.cluster, address(4)) === 'down' && !timeline.includes('majority downs 4'))
        timeline.push('majority downs 4');
    });
    network.partition([address(1), address(2), address(3)], [address(4), address(5)]);

    await advanceUntil(
      () => [n1!, n2!, n3!].every((n) => n.cluster.members().length === 3),
      'minority removed',
      60_000,
    );
    expect(causes).toEqual(['minority-side', 'minority-side']);
    expect(timeline.indexOf('majority downs 4')).toBeGreaterThan(timeline.indexOf('self-down 4'));
    expect(timeline.indexOf('majority downs 4')).toBeGreaterThan(timeline.indexOf('self-down 5'));
    expect(n4!.cluster.selfMember()?.status).toBe('down');
    for (const n of [n1!, n2!, n3!])
      expect(n.cluster.members().every((m) => m.status === 'up' && m.reachable)).toBe(true);

    // After healing, the survivors stay as they are: the downed nodes stopped and do not come back.
    network.heal();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(n1!.cluster.members().map((m) => m.address.port - 2550)).toEqual([1, 2, 3]);
  });

  it('splits an even cluster in favour of the half holding the lowest address', async () => {
    const network = new MemoryNetwork();
    const [n1, n2, n3, n4] = await startInOrder(network, 4);
    const downed: number[] = [];
    for (const n of [n1!, n2!, n3!, n4!]) n.cluster.onSelfDown(() => downed.push(n.address.port - 2550));
    network.partition([address(1), address(4)], [address(2), address(3)]);
    await advanceUntil(() => n1!.cluster.members().length === 2, 'other half removed');
    expect(downed.sort()).toEqual([2, 3]);
    expect(n4!.cluster.members().map((m) => `${m.address.port - 2550}:${m.status}`)).toEqual(['1:up', '4:up']);
  });

  it('tells a member downed by an operator, which then stops', async () => {
    const network = new MemoryNetwork();
    const [n1, , n3] = await startInOrder(network, 3);
    const causes: SelfDownCause[] = [];
    n3!.cluster.onSelfDown((cause) => causes.push(cause));
    n1!.cluster.down(address(3));
    await advanceUntil(() => causes.length === 1, 'n3 learns it is down');
    expect(causes).toEqual(['downed-by-cluster']);
    await advanceUntil(() => statusOf(n1!.cluster, address(3)) === undefined, 'n3 removed');
  });

  it('records when a down was decided, and every node keeps the earliest of concurrent decisions', async () => {
    const network = new MemoryNetwork();
    const [n1, n2, n3, n4] = await startInOrder(network, 5, { downAfterMs: 60_000 });
    const downedAt = (observer: Cluster): number | undefined =>
      observer.members().find((m) => m.address.equals(address(4)))?.downedAtMs;
    expect(downedAt(n1!.cluster)).toBeUndefined();
    // Node 5 stays cut off throughout, so the state cannot converge and node 4 stays down (not removed).
    network.isolate(address(5));
    network.partition([address(1)], [address(2), address(3), address(4)]);
    n2!.cluster.down(address(4));
    const decidedAt = Date.now();
    await vi.advanceTimersByTimeAsync(250);
    n1!.cluster.down(address(4)); // does not know of the earlier decision yet
    expect(downedAt(n1!.cluster)).toBe(decidedAt + 250);
    const changes: number[] = [];
    n1!.cluster.onChange(() => changes.push(downedAt(n1!.cluster) ?? -1));
    network.heal();
    network.isolate(address(5));
    await advanceUntil(
      () => [n1!, n2!, n3!].every((n) => downedAt(n.cluster) === decidedAt),
      'the earliest decision everywhere',
      5_000,
      10,
    );
    // Node 4 took neither decision from node 2 (not its leader while node 1 was not yet unreachable): it
    // learns it is down from its leader, node 1, once the partition heals.
    await advanceUntil(() => n4!.cluster.selfMember()?.status === 'down', 'node 4 learns it is down', 5_000, 10);
    expect(n4!.cluster.selfMember()?.downedAtMs).toBe(decidedAt);
    expect(statusOf(n1!.cluster, address(4))).toBe('down');
    // A change of downedAtMs alone is a change of the view.
    expect(changes).toContain(decidedAt);
  });

  it('recovers reachability after a short partition without downing anyone', async () => {
    const network = new MemoryNetwork();
    const started = await startInOrder(network, 3);
    network.isolate(address(3));
    await advanceUntil(() => started[0]!.cluster.members().some((m) => !m.reachable), 'unreachable');
    network.heal();
    await advanceUntil(() => allUp(started), 'reachable again', 10_000);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(allUp(started)).toBe(true);
  });
});

/** Starts `node`'s graceful leave; `removed` once it saw itself removed, `left` once leave() resolved. */
function startLeaving(node: TestNode): { readonly removed: boolean; readonly left: boolean } {
  const flags = { removed: false, left: false };
  node.cluster.onSelfRemoved(() => {
    flags.removed = true;
  });
  void node.cluster.leave().then(() => {
    flags.left = true;
  });
  return flags;
}

describe('Cluster: graceful leave', () => {
  it('runs onLeaving tasks first, then walks leaving -> exiting -> removed, and resolves', async () => {
    const network = new MemoryNetwork();
    const [n1, n2, n3] = await startInOrder(network, 3);
    const seenByN1: string[] = [];
    n1!.cluster.onChange(() => {
      const s = statusOf(n1!.cluster, address(2)) ?? 'removed';
      if (seenByN1.at(-1) !== s) seenByN1.push(s);
    });
    let taskDone = false;
    let statusDuringTask: string | undefined;
    n2!.cluster.onLeaving(async () => {
      statusDuringTask = n2!.cluster.selfMember()?.status;
      await new Promise<void>((resolve) => setTimeout(resolve, 3_000));
      taskDone = true;
    });
    const leaving = startLeaving(n2!);
    await vi.advanceTimersByTimeAsync(2_900);
    expect(statusDuringTask).toBe('up');
    expect(statusOf(n1!.cluster, address(2))).toBe('up');
    await advanceUntil(() => leaving.left, 'leave resolved', 15_000);
    expect(taskDone).toBe(true);
    expect(leaving.removed).toBe(true);
    expect(seenByN1).toEqual(['leaving', 'exiting', 'removed']);
    await advanceUntil(() => statusOf(n3!.cluster, address(2)) === undefined, 'removed on n3');
    expect(n2!.cluster.leave()).toBe(n2!.cluster.leave());
  });

  it('bounds a hanging onLeaving task by leaveTimeoutMs', async () => {
    const network = new MemoryNetwork();
    const [n1, n2] = await startInOrder(network, 2, { leaveTimeoutMs: 4_000 });
    n2!.cluster.onLeaving(() => new Promise<void>(() => undefined));
    let left = false;
    void n2!.cluster.leave().then(() => {
      left = true;
    });
    await vi.advanceTimersByTimeAsync(3_900);
    expect(statusOf(n1!.cluster, address(2))).toBe('up');
    await advanceUntil(() => left, 'leave after timeout', 15_000);
    await advanceUntil(() => statusOf(n1!.cluster, address(2)) === undefined, 'removed');
  });

  it('hands leadership over when the leader leaves', async () => {
    const network = new MemoryNetwork();
    const [n1, n2, n3] = await startInOrder(network, 3);
    let left = false;
    void n1!.cluster.leave().then(() => {
      left = true;
    });
    await advanceUntil(() => left, 'leader left');
    await advanceUntil(
      () => n2!.cluster.members().length === 2 && n3!.cluster.members().length === 2,
      'leader removed',
    );
    expect(n2!.cluster.leader()?.equals(address(2))).toBe(true);
    expect(n3!.cluster.leader()?.equals(address(2))).toBe(true);
  });

  it('lets the last member leave on its own', async () => {
    const network = new MemoryNetwork();
    const [n1] = await startInOrder(network, 1);
    const leaving = startLeaving(n1!);
    // Well before exitTimeoutMs (10 s): the node removes itself instead of timing out.
    await advanceUntil(() => leaving.left, 'left', 5_000);
    expect(leaving.removed).toBe(true);
  });
});

describe('Cluster: gossip under faults', () => {
  it('converges with dropped, duplicated, delayed and reordered messages', async () => {
    const network = new MemoryNetwork({ seed: 99 });
    network.setFaults({ dropRate: 0.2, duplicateRate: 0.2, jitterMs: 40, reorder: true });
    nodes = [1, 2, 3, 4, 5].map((i) => createNode(network, i, { downAfterMs: 60_000 }));
    for (const n of nodes) n.cluster.start();
    await advanceUntil(() => allUp(nodes) && nodes.every((n) => n.cluster.isConverged()), 'convergence', 120_000);
    const reference = JSON.stringify(nodes[0]!.cluster.members());
    for (const n of nodes) expect(JSON.stringify(n.cluster.members())).toBe(reference);
    expect(network.stats().dropped).toBeGreaterThan(0);
    expect(network.stats().duplicated).toBeGreaterThan(0);
  });
});

describe('Cluster: configuration', () => {
  it('rejects bad configuration with a message naming the field', () => {
    const network = new MemoryNetwork();
    const transport = network.transport(address(1));
    expect(() => new Cluster({ transport, config: { heartbeatIntervalMs: 0 } })).toThrow(/heartbeatIntervalMs/);
    expect(() => new Cluster({ transport, config: { seedNodes: ['nope'] } })).toThrow(/expected "system@host:port"/);
    expect(() => new Cluster({ transport, config: { downAfterMs: 1_000, minorityDownAfterMs: 2_000 } })).toThrow(
      /minorityDownAfterMs/,
    );
    expect(() => new Cluster({ transport, config: { failureDetector: { threshold: -1 } } })).toThrow(/threshold/);
    const cluster = new Cluster({ transport });
    expect(cluster.config.downAfterMs).toBe(10_000);
    expect(cluster.config.minorityDownAfterMs).toBe(7_500);
    expect(cluster.config.heartbeatIntervalMs).toBe(1_000);
  });
});
