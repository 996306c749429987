// Issue 27 over real loopback TCP: a raw peer that passes the handshake of nodes started without a cluster
// secret (anyone who reaches the port can) sends each forged Gossip of the issue, built from the member keys
// it knows, to every node. Every node stays alive, a member, sees every member up and reachable, and keeps
// gossiping with the others.
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Cluster } from '../../src/cluster/membership/cluster.js';
import { encodeFrame, FrameDecoder } from '../../src/cluster/transport/frame-codec.js';
import { handshakeFrame } from '../../src/cluster/transport/handshake.js';
import { decodeValue, encodeValue } from '../../src/cluster/transport/message-codec.js';
import { TcpTransport } from '../../src/cluster/transport/tcp-transport.js';
import { issueAttacks, type KnownMember } from './forgery.js';
import { authenticatedSocket } from './raw-peer.js';
import { TcpClusters } from './tcp-clusters.js';
import { waitFor } from './wait-for.js';
import { FAST_TCP_CLUSTER } from './cluster-harness.js';

const tcpClusters = new TcpClusters();
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await tcpClusters.cleanUp();
});

describe('Cluster over TCP: forged gossip from a peer that is not a member (issue 27)', () => {
  it('changes nothing: every node stays up, a member, reachable and gossiping', async () => {
    const { transports, clusters } = await tcpClusters.start(3);
    const allUp = (): boolean =>
      clusters.every((c) => c.members().length === 3 && c.members().every((m) => m.status === 'up' && m.reachable));
    await waitFor(allUp, 'all up');
    const ends: string[] = [];
    for (const c of clusters) {
      c.onSelfDown((cause) => ends.push(`${c.self.toString()} down (${cause})`));
      c.onSelfRemoved(() => ends.push(`${c.self.toString()} removed`));
    }
    const members: KnownMember[] = clusters.map((c) => ({
      address: c.self,
      incarnation: c.incarnation,
      upNumber: c.selfMember()?.upNumber ?? 0,
    }));
    // Count what reaches each node from the raw peer: listeners run in order, the cluster's first.
    const fromRaw = transports.map(() => 0);
    transports.forEach((t, i) => t.onMessage((from) => (from.port === 1 ? fromRaw[i]!++ : undefined)));

    let sent = 0;
    for (const [i, transport] of transports.entries()) {
      const socket = await authenticatedSocket({
        port: transport.self.port,
        to: transport.self.toString(),
        from: `tcp@127.0.0.1:1`,
      });
      sockets.push(socket);
      const others = members.filter((_, j) => j !== i);
      const attacks = issueAttacks(members, members[i]!, others).filter(([, m]) => m.type === 'Gossip');
      for (const [, message] of attacks) socket.write(encodeFrame('message', encodeValue(message)));
      sent = attacks.length;
    }
    expect(sent).toBeGreaterThanOrEqual(5);
    await waitFor(() => fromRaw.every((n) => n === sent), 'every forged gossip delivered to its node');
    // Then enough gossip and heartbeats between the members for any consequence to play out (the issue's
    // downings took 14-18 ms, its pruned members exited within a second).
    const delivered = transports.map((t) => t.stats().delivered);
    await waitFor(
      () => transports.every((t, i) => t.stats().delivered >= delivered[i]! + 40),
      'forty more messages through every node',
      10_000,
    );
    expect(ends).toEqual([]);
    expect(clusters.map((c) => c.selfMember()?.status)).toEqual(['up', 'up', 'up']);
    expect(allUp()).toBe(true);
    expect(clusters.every((c) => c.isConverged())).toBe(true);
  });

  it("answers a Hello with a Challenge that carries a nonce and the protocol range, and nothing of the node's member key or release", async () => {
    const transport = await TcpTransport.start({ system: 'tcp' });
    tcpClusters.adopt(
      new Cluster({ transport, config: { ...FAST_TCP_CLUSTER, seedNodes: [transport.self] } }),
      transport,
    );
    const socket = connect({ host: '127.0.0.1', port: transport.self.port });
    sockets.push(socket);
    const decoder = new FrameDecoder({ maxFrameBytes: 4096 });
    const challenge = new Promise<unknown>((resolve, reject) => {
      socket.on('error', reject);
      socket.on('data', (chunk: Buffer) => {
        const frame = decoder.push(chunk).frames[0];
        if (frame) resolve(decodeValue(frame.payload));
      });
    });
    socket.write(
      handshakeFrame({
        t: 'Hello',
        from: 'tcp@127.0.0.1:1',
        to: transport.self.toString(),
        incarnation: 'probe',
        nonce: randomBytes(16),
      }),
    );
    const decoded = (await challenge) as { ok: boolean; value: Record<string, unknown> };
    expect(decoded.ok).toBe(true);
    // Besides the nonce only what negotiation needs: the version chosen and this node's range (its release waits
    // for the Accepted, after the dialler's proof).
    expect(Object.keys(decoded.value).sort()).toEqual(['nonce', 'protocolMax', 'protocolMin', 't', 'version']);
    expect(JSON.stringify(decoded.value)).not.toContain(transport.incarnation);
  });
});
