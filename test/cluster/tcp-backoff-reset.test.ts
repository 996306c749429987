// A peer that was dialled before it was listening sits in our reconnect backoff; once it dials us (it is up now)
// that backoff must not hold our messages to it back. Before this, a graceful leave right after a join took the
// backoff's remaining seconds to re-home, because the leaving node's hand-off waited on a dial.
import { afterEach, describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { TcpTransport, type TcpTransportOptions } from '../../src/cluster/transport/tcp-transport.js';
import { MESSAGE_FAMILIES } from '../../src/protocol.js';
import { freePorts } from '../support/ports.js';
import { waitFor } from './wait-for.js';
import { heartbeatsOf } from './tcp-peers.js';

const started: TcpTransport[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((t) => t.close()));
});

// A backoff far longer than any wait below: a message that arrives did not wait it out.
const LONG_BACKOFF = { initialDelayMs: 60_000, maxDelayMs: 60_000 };

async function start(options: Partial<TcpTransportOptions> = {}): Promise<TcpTransport> {
  const transport = await TcpTransport.start({ system: 'test', ...options });
  for (const family of MESSAGE_FAMILIES) transport.register(family);
  started.push(transport);
  return transport;
}

describe('reconnect backoff and a peer that dials us', () => {
  it('delivers what waited in the backoff as soon as the not-yet-listening peer connects inbound', async () => {
    const a = await start({ backoff: LONG_BACKOFF });
    const [port] = (await freePorts(1)) as [number];
    const address = new NodeAddress('test', '127.0.0.1', port);
    a.send(address, { type: 'Heartbeat', sequence: 1, incarnation: 'a' });
    await waitFor(() => a.stats().connectFailures === 1, 'the dial to a port nobody listens on failed');

    const b = await start({ port, backoff: LONG_BACKOFF });
    const atB = heartbeatsOf(b);
    b.send(a.self, { type: 'Heartbeat', sequence: 1, incarnation: 'b' });
    await waitFor(() => atB.length === 1, 'the queued message reached the peer that dialled us');
    expect(atB).toEqual([1]);
    expect(a.stats().connectFailures).toBe(1);

    // A later loss starts again from the initial delay rather than from the failures before the peer existed;
    // and an open connection is not disturbed by further inbound connections.
    a.send(address, { type: 'Heartbeat', sequence: 2, incarnation: 'a' });
    await waitFor(() => atB.length === 2, 'the open connection still carries messages');
    expect(a.stats().connections).toBe(1);
  });
});
