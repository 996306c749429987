// Transport.onConnectionLost on real sockets: an open connection the peer ends (its process exits, as a kill -9
// does) is reported with the peer's address, on the outbound side and on the inbound side; a dial that never
// opened is not (the membership probes on a report: death-confirmation.ts).
import { afterEach, describe, expect, it } from 'vitest';
import type { NodeAddress } from '../../src/cluster/address.js';
import type { TcpTransport } from '../../src/cluster/transport/tcp-transport.js';
import { heartbeat, receivedHeartbeats } from './heartbeats.js';
import { TcpTestBed } from './tcp-peers.js';
import { waitFor } from './wait-for.js';

const bed = new TcpTestBed();
afterEach(() => bed.cleanUp());

function lostPeers(transport: TcpTransport): string[] {
  const lost: string[] = [];
  transport.onConnectionLost((peer: NodeAddress) => lost.push(peer.toString()));
  return lost;
}

describe('Transport.onConnectionLost (TCP)', () => {
  it('reports a peer that ends our open outbound connection', async () => {
    const a = await bed.start();
    const b = await bed.start();
    const lost = lostPeers(a);
    const received = receivedHeartbeats(b);
    a.send(b.self, heartbeat(1));
    await waitFor(() => received.length === 1, 'the heartbeat arrived: the connection is open');
    await bed.stop(b);
    await waitFor(() => lost.length > 0, 'the loss reported');
    expect(lost).toEqual([b.self.toString()]);
  });

  it('reports an authenticated peer that ends its inbound connection', async () => {
    const a = await bed.start();
    const lost = lostPeers(a);
    const peer = await bed.peer(a);
    await waitFor(() => a.usage().connections['inbound-open'] === 1, 'the inbound connection is open');
    peer.socket.destroy();
    await waitFor(() => lost.length > 0, 'the loss reported');
    expect(lost).toEqual([peer.from]);
  });

  it('does not report a dial that never opened, nor anything once unsubscribed', async () => {
    const a = await bed.start();
    const b = await bed.start();
    const gone = b.self;
    await bed.stop(b);
    const lost: string[] = [];
    const unsubscribe = a.onConnectionLost((peer) => lost.push(peer.toString()));
    a.send(gone, heartbeat(1));
    await waitFor(() => a.stats().connectFailures >= 2, 'the dials were refused');
    expect(lost).toEqual([]);
    unsubscribe();
    const c = await bed.start();
    const received = receivedHeartbeats(c);
    a.send(c.self, heartbeat(2));
    await waitFor(() => received.length === 1, 'open to c');
    await bed.stop(c);
    await waitFor(() => a.stats().connectionsLost === 1, 'the connection to c lost');
    expect(lost).toEqual([]);
  });
});
