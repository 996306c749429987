// MemoryNetwork: asynchronous delivery through the wire codec (encoded and checked once per message object,
// decoded once per delivery), and each injected fault.
import { describe, expect, it, vi } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import {
  MemoryNetwork,
  type MemoryTransport,
  type NetworkFaults,
} from '../../src/cluster/transport/memory-transport.js';
import { CLUSTER_MESSAGES, type ClusterMessage } from '../../src/cluster/membership/messages.js';
import { isFamilyMessage, type MessageFamily } from '../../src/cluster/transport/wire-message.js';
import { messageCodecStats } from '../../src/cluster/transport/message-codec.js';
import { PLACEMENT_SYNC_MESSAGES } from '../../src/placement-replication/sync-messages.js';
import type { ProtocolMessage } from '../../src/protocol.js';
import { ActorTsError } from '../../src/errors.js';
import { useFakeTime } from '../support/fake-time.js';
import { heartbeat, receivedHeartbeats } from './heartbeats.js';

const a = NodeAddress.parse('sys@127.0.0.1:2551');
const b = NodeAddress.parse('sys@127.0.0.1:2552');
const c = NodeAddress.parse('sys@127.0.0.1:2553');

/** A node's transport that speaks the membership family, as a Cluster would register it. */
function attach(net: MemoryNetwork, address: NodeAddress): MemoryTransport {
  const transport = net.transport(address);
  transport.register(CLUSTER_MESSAGES);
  return transport;
}

/** Node a on a fresh network, and every message nodes b and c receive, in arrival order. */
function senderAndTwoReceivers(): { net: MemoryNetwork; ta: MemoryTransport; seen: unknown[] } {
  const net = new MemoryNetwork();
  const ta = attach(net, a);
  const seen: unknown[] = [];
  attach(net, b).onMessage((_from, message) => seen.push(message));
  attach(net, c).onMessage((_from, message) => seen.push(message));
  return { net, ta, seen };
}

/** Nodes a and b on `net` (a fresh network unless given), and what b receives. */
function pair(net = new MemoryNetwork()): {
  net: MemoryNetwork;
  ta: MemoryTransport;
  tb: MemoryTransport;
  received: ReturnType<typeof receivedHeartbeats>;
} {
  const ta = attach(net, a);
  const tb = attach(net, b);
  return { net, ta, tb, received: receivedHeartbeats(tb) };
}

/** A pair on a network of `seed` with `faults`; a sends b heartbeats 0..count-1, and all of them are let through. */
async function sendUnderFaults(seed: number, faults: NetworkFaults, count: number) {
  const { net, ta, received } = pair(new MemoryNetwork({ seed }));
  net.setFaults(faults);
  for (let i = 0; i < count; i++) ta.send(b, heartbeat(i));
  await vi.runAllTimersAsync();
  return { net, ta, received, stats: net.stats() };
}

describe('MemoryNetwork', () => {
  useFakeTime();

  it('delivers asynchronously, never inside send, and counts it', async () => {
    const { net, ta, received } = pair();
    ta.send(b, heartbeat(1));
    expect(received).toEqual([]);
    await vi.runAllTimersAsync();
    expect(received).toEqual([{ from: a.toString(), sequence: 1 }]);
    expect(net.stats()).toEqual({ sent: 1, delivered: 1, dropped: 0, duplicated: 0, rejected: 0, unparsed: 0 });
  });

  it('rejects a message that would not survive encode -> the registered parse, and delivers nothing', async () => {
    const { net, ta, received } = pair();
    const bogus = { type: 'Heartbeat', sequence: 'one' } as unknown as ProtocolMessage;
    expect(() => ta.send(b, bogus)).toThrow(ActorTsError);
    const unknownType = { type: 'NoSuchMessage' } as unknown as ProtocolMessage;
    expect(() => ta.send(b, unknownType)).toThrow(/does not pass the parse of a family/);
    const bigint = { type: 'Heartbeat', sequence: 2n ** 70n } as unknown as ProtocolMessage;
    expect(() => ta.send(b, bigint)).toThrow(/cannot encode/);
    await vi.runAllTimersAsync();
    expect(received).toEqual([]);
    expect(net.stats()).toMatchObject({ sent: 0, rejected: 3, delivered: 0 });
  });

  it('gives each receiver its own decoded copy', async () => {
    const { net, ta, seen } = senderAndTwoReceivers();
    const original = heartbeat(7);
    ta.send(b, original);
    ta.send(c, original);
    await vi.runAllTimersAsync();
    expect(seen).toHaveLength(2);
    expect(seen[0]).toEqual(original);
    expect(seen[0]).not.toBe(original);
    expect(seen[0]).not.toBe(seen[1]);
  });

  it('applies base latency and fault delay through the injected schedule', async () => {
    const delays: number[] = [];
    const net = new MemoryNetwork({
      delayMs: 30,
      schedule: (fn, ms) => {
        delays.push(ms);
        setTimeout(fn, ms);
      },
    });
    const { ta, received } = pair(net);
    net.setFaults({ delayMs: 20 });
    ta.send(b, heartbeat(1));
    expect(delays).toEqual([50]);
    await vi.advanceTimersByTimeAsync(49);
    expect(received).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(received).toHaveLength(1);
  });

  it('drops about dropRate of the messages, deterministically per seed', async () => {
    const run = async (seed: number): Promise<number[]> => {
      const { received, stats } = await sendUnderFaults(seed, { dropRate: 0.3 }, 1000);
      expect(stats.sent).toBe(1000);
      expect(stats.dropped + stats.delivered).toBe(1000);
      expect(stats.dropped).toBeGreaterThan(220);
      expect(stats.dropped).toBeLessThan(380);
      return received.map((r) => r.sequence);
    };
    const first = await run(7);
    expect(await run(7)).toEqual(first);
    expect(await run(8)).not.toEqual(first);
  });

  it('duplicates about duplicateRate of the messages', async () => {
    const { received, stats } = await sendUnderFaults(3, { duplicateRate: 0.5 }, 400);
    expect(stats.duplicated).toBeGreaterThan(150);
    expect(stats.duplicated).toBeLessThan(250);
    expect(stats.delivered).toBe(400 + stats.duplicated);
    expect(received).toHaveLength(400 + stats.duplicated);
    expect(new Set(received.map((r) => r.sequence)).size).toBe(400);
  });

  it('keeps per-pair FIFO under jitter, and lets messages overtake with reorder', async () => {
    const { net, ta, received } = await sendUnderFaults(11, { jitterMs: 50 }, 100);
    const inOrder = received.map((r) => r.sequence);
    expect(inOrder).toEqual([...Array(100).keys()]);

    received.length = 0;
    net.setFaults({ reorder: true });
    for (let i = 0; i < 100; i++) ta.send(b, heartbeat(i));
    await vi.runAllTimersAsync();
    const reordered = received.map((r) => r.sequence);
    expect(reordered).not.toEqual([...Array(100).keys()]);
    expect([...reordered].sort((x, y) => x - y)).toEqual([...Array(100).keys()]);
  });

  it('partitions two sides both ways, including messages already in flight, until heal', async () => {
    const net = new MemoryNetwork({ delayMs: 10 });
    const ta = attach(net, a);
    const tb = attach(net, b);
    const tc = attach(net, c);
    const atA = receivedHeartbeats(ta);
    const atB = receivedHeartbeats(tb);
    const atC = receivedHeartbeats(tc);
    ta.send(b, heartbeat(1)); // in flight when the partition starts
    net.partition([a], [b]);
    tb.send(a, heartbeat(2));
    ta.send(c, heartbeat(3));
    tc.send(b, heartbeat(4));
    await vi.runAllTimersAsync();
    expect(atA).toEqual([]);
    expect(atB).toEqual([{ from: c.toString(), sequence: 4 }]);
    expect(atC).toEqual([{ from: a.toString(), sequence: 3 }]);
    expect(net.stats().dropped).toBe(2);

    net.heal();
    ta.send(b, heartbeat(5));
    await vi.runAllTimersAsync();
    expect(atB.at(-1)).toEqual({ from: a.toString(), sequence: 5 });
  });

  it('isolates one node from everybody until heal', async () => {
    const { net, ta, tb, received: atB } = pair();
    const atA = receivedHeartbeats(ta);
    net.isolate(a);
    ta.send(b, heartbeat(1));
    tb.send(a, heartbeat(2));
    const tc = attach(net, c);
    tc.send(a, heartbeat(3));
    tc.send(b, heartbeat(4));
    await vi.runAllTimersAsync();
    expect(atA).toEqual([]);
    expect(atB).toEqual([{ from: c.toString(), sequence: 4 }]);
    net.heal();
    tc.send(a, heartbeat(5));
    await vi.runAllTimersAsync();
    expect(atA).toEqual([{ from: c.toString(), sequence: 5 }]);
  });

  it('drops messages to an unknown or closed node and lets the address attach again', async () => {
    const net = new MemoryNetwork();
    const ta = attach(net, a);
    let tb = attach(net, b);
    expect(() => attach(net, b)).toThrow(/already attached/);
    ta.send(c, heartbeat(1));
    await tb.close();
    ta.send(b, heartbeat(2));
    tb.send(a, heartbeat(3)); // closed: ignored
    await vi.runAllTimersAsync();
    expect(net.stats()).toMatchObject({ sent: 2, dropped: 2, delivered: 0 });
    tb = attach(net, b);
    const atB = receivedHeartbeats(tb);
    ta.send(b, heartbeat(4));
    await vi.runAllTimersAsync();
    expect(atB).toEqual([{ from: a.toString(), sequence: 4 }]);
  });

  it('unsubscribes listeners and rejects invalid fault settings without changing the faults', async () => {
    const { net, ta, tb } = pair();
    const seen: number[] = [];
    const off = tb.onMessage(() => seen.push(1));
    expect(() => net.setFaults({ dropRate: 1.5 })).toThrow(/dropRate/);
    expect(() => net.setFaults({ jitterMs: -1 })).toThrow(/jitterMs/);
    expect(() => new MemoryNetwork({ delayMs: Number.NaN })).toThrow(/delayMs/);
    ta.send(b, heartbeat(1));
    await vi.runAllTimersAsync();
    expect(seen).toEqual([1]);
    off();
    ta.send(b, heartbeat(2));
    await vi.runAllTimersAsync();
    expect(seen).toEqual([1]);
    expect(net.stats().dropped).toBe(0);
  });

  it('delivers only families the receiver registered, as TCP does, and counts the rest as unparsed', async () => {
    const net = new MemoryNetwork();
    const ta = attach(net, a);
    const bare = net.transport(b);
    const seen: string[] = [];
    bare.onMessage((_from, message) => seen.push(message.type));
    ta.send(b, heartbeat(1));
    await vi.runAllTimersAsync();
    expect(seen).toEqual([]);
    expect(net.stats()).toMatchObject({ sent: 1, delivered: 0, unparsed: 1 });
    bare.register(CLUSTER_MESSAGES);
    ta.send(b, heartbeat(2));
    await vi.runAllTimersAsync();
    expect(seen).toEqual(['Heartbeat']);
  });

  it('registers a family idempotently and refuses another family claiming one of its types or its name', () => {
    const net = new MemoryNetwork();
    const ta = attach(net, a);
    expect(() => ta.register(CLUSTER_MESSAGES)).not.toThrow();
    const clash: MessageFamily<ClusterMessage> = { name: 'other', types: new Set(['Join']), parse: () => undefined };
    expect(() => ta.register(clash)).toThrow(/"Join".*already registered by "cluster"/);
    const sameName: MessageFamily<ClusterMessage> = { name: 'cluster', types: new Set(['X']), parse: () => undefined };
    expect(() => ta.register(sameName)).toThrow(/named "cluster"/);
  });

  it('refuses at send a value msgpackr can only encode as an extension (a Date): extensions cannot cross the wire', async () => {
    const { net, ta, received } = pair();
    const withDate = {
      type: 'Heartbeat',
      sequence: 1,
      incarnation: 'x',
      extra: new Date(0),
    } as unknown as ProtocolMessage;
    expect(() => ta.send(b, withDate)).toThrow(ActorTsError);
    await vi.runAllTimersAsync();
    expect(received).toEqual([]);
    expect(net.stats()).toMatchObject({ sent: 0, rejected: 1 });
  });

  it('encodes and checks a message object once however often it is sent, and each receiver still decodes its own copy', async () => {
    const { net, ta, seen } = senderAndTwoReceivers();
    const original = heartbeat(11);
    const before = messageCodecStats();
    for (let i = 0; i < 3; i++) {
      ta.send(b, original);
      ta.send(c, original);
    }
    const after = messageCodecStats();
    expect(after.encodes - before.encodes).toBe(1);
    expect(after.checks - before.checks).toBe(1);
    expect(after.reused - before.reused).toBe(5);
    // An equal but different object is another message: encoded again.
    ta.send(b, heartbeat(11));
    expect(messageCodecStats().encodes - before.encodes).toBe(2);
    await vi.runAllTimersAsync();
    expect(seen).toHaveLength(7);
    for (const message of seen) expect(message).toEqual(original);
    expect(new Set([original, ...seen]).size).toBe(8);
    expect(net.stats()).toMatchObject({ sent: 7, delivered: 7, rejected: 0 });
  });

  it('throws on every send of a message object that fails the parse, and of one that cannot be encoded', async () => {
    const { net, ta, received } = pair();
    const bogus = { type: 'Heartbeat', sequence: 'one' } as unknown as ProtocolMessage;
    const bigint = { type: 'Heartbeat', sequence: 2n ** 70n } as unknown as ProtocolMessage;
    for (let i = 0; i < 3; i++) {
      expect(() => ta.send(b, bogus)).toThrow(/does not pass the parse of a family/);
      expect(() => ta.send(b, bigint)).toThrow(/cannot encode/);
    }
    await vi.runAllTimersAsync();
    expect(received).toEqual([]);
    expect(net.stats()).toMatchObject({ sent: 0, rejected: 6, delivered: 0 });
  });

  it("checks against each sender's own families: a pass on one transport does not let the object through another", () => {
    const net = new MemoryNetwork();
    const clusterOnly = attach(net, a);
    const syncOnly = net.transport(b);
    syncOnly.register(PLACEMENT_SYNC_MESSAGES);
    const update = { type: 'PlacementUpdate', update: new Uint8Array([1]) } as const;
    syncOnly.send(a, update);
    expect(() => clusterOnly.send(b, update as unknown as ClusterMessage)).toThrow(
      /does not pass the parse of a family/,
    );
    expect(net.stats()).toMatchObject({ sent: 1, rejected: 1 });
  });

  it('never lets a receiver change the bytes another delivery of the same object is decoded from', async () => {
    const net = new MemoryNetwork();
    const sender = net.transport(a);
    sender.register(PLACEMENT_SYNC_MESSAGES);
    const payloads: Uint8Array[] = [];
    const contents: number[][] = [];
    for (const address of [b, c]) {
      const receiver = net.transport(address);
      receiver.register(PLACEMENT_SYNC_MESSAGES);
      receiver.onMessage((_from, message) => {
        if (isFamilyMessage(PLACEMENT_SYNC_MESSAGES, message) && message.type === 'PlacementUpdate') {
          payloads.push(message.update);
          contents.push([...message.update]);
          message.update.fill(0);
        }
      });
    }
    const update = { type: 'PlacementUpdate', update: new Uint8Array([7, 8, 9]) } as const;
    sender.send(b, update);
    await vi.runAllTimersAsync();
    sender.send(c, update);
    await vi.runAllTimersAsync();
    expect(payloads).toHaveLength(2);
    expect(payloads[0]).not.toBe(payloads[1]);
    expect(payloads[0]).not.toBe(update.update);
    // The first receiver zeroed its copy before the second send: the second still got the original bytes.
    expect(contents).toEqual([
      [7, 8, 9],
      [7, 8, 9],
    ]);
    expect([...update.update]).toEqual([7, 8, 9]);
  });
});
