// TcpTransport with mutual TLS over real loopback sockets and real certificates (openssl): two transports of one
// authority exchange messages; a transport whose certificate another authority signed is refused by the listener
// and counted by reason; a certificate replaced on disk (followed by FollowedTls) is presented on new connections
// without a restart, while a half-done replacement is kept out.
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TcpTransport } from '../../src/cluster/transport/tcp-transport.js';
import { FollowedTls } from '../../src/tls/followed-tls.js';
import { loadTlsMaterial } from '../../src/tls/tls-files.js';
import { makeAuthority, makeCertificate, type TestAuthority } from '../support/tls-certificates.js';
import { heartbeat, receivedHeartbeats } from './heartbeats.js';
import { TcpTestBed } from './tcp-peers.js';
import { waitFor } from './wait-for.js';

const bed = new TcpTestBed();
const followers: FollowedTls[] = [];
afterEach(async () => {
  for (const follower of followers.splice(0)) follower.close();
  await bed.cleanUp();
});

let one: TestAuthority;
let two: TestAuthority;
let both: string;
beforeAll(() => {
  one = makeAuthority('tcp-one');
  two = makeAuthority('tcp-two');
  // A bundle trusting both authorities: what a node rotating from one to the other trusts meanwhile.
  both = join(one.dir, 'both.pem');
  writeFileSync(
    both,
    `${loadTlsMaterial({ cert: one.cert, key: one.key }).cert}\n${loadTlsMaterial({ cert: two.cert, key: two.key }).cert}`,
  );
});

/** A transport with TLS material from files (followed: a change is applied to it), trusting `ca`. */
async function tlsTransport(cert: string, key: string, ca: string, subject?: RegExp): Promise<TcpTransport> {
  let transport: TcpTransport | undefined;
  const follower = new FollowedTls({ cert, key, ca }, { intervalMs: 50, onChange: (m) => transport?.useTls(m) });
  followers.push(follower);
  transport = await bed.start({ tls: { current: () => follower.current, subject } });
  return transport;
}

describe('TcpTransport with mutual TLS', () => {
  it('delivers between transports of one authority and refuses one of another, counting why', async () => {
    const a = makeCertificate(one, 'tcp-a');
    const b = makeCertificate(one, 'tcp-b');
    const stranger = makeCertificate(two, 'tcp-stranger');
    const transportA = await tlsTransport(a.cert, a.key, one.cert);
    const atA = receivedHeartbeats(transportA);
    const transportB = await tlsTransport(b.cert, b.key, one.cert);
    transportB.send(transportA.self, heartbeat(1));
    await waitFor(() => atA.length === 1, 'a message over TLS');
    // The stranger trusts the cluster's authority, so it gets as far as showing its own certificate.
    const outsider = await tlsTransport(stranger.cert, stranger.key, one.cert);
    outsider.send(transportA.self, heartbeat(2));
    await waitFor(() => (transportA.tlsRefusals().get('untrusted_certificate') ?? 0) > 0, 'the refusal');
    expect(atA.map((m) => m.sequence)).toEqual([1]);
  });

  it('with a subject pattern, refuses a certificate of the authority whose subject does not match, both ways', async () => {
    const server = makeCertificate(one, 'tcp-server');
    const matching = makeCertificate(one, 'tcp-client');
    const misnamed = makeCertificate(one, 'intruder');
    const transport = await tlsTransport(server.cert, server.key, one.cert, /^tcp-/);
    const received = receivedHeartbeats(transport);
    (await tlsTransport(misnamed.cert, misnamed.key, one.cert)).send(transport.self, heartbeat(1));
    await waitFor(() => (transport.tlsRefusals().get('unexpected_subject') ?? 0) > 0, 'the misnamed client refused');
    (await tlsTransport(matching.cert, matching.key, one.cert, /^tcp-/)).send(transport.self, heartbeat(2));
    await waitFor(() => received.some((m) => m.sequence === 2), 'the matching client');
    // The dialling side checks the server's name too: a client expecting other names hangs up.
    (await tlsTransport(matching.cert, matching.key, one.cert, /^db-/)).send(transport.self, heartbeat(3));
    await waitFor(() => (transport.tlsRefusals().get('aborted') ?? 0) > 0, 'the client to hang up on the server');
    expect(received.map((m) => m.sequence)).toEqual([2]);
  });

  it('presents a certificate replaced on disk on new connections, keeping a half-done replacement out', async () => {
    const first = makeCertificate(one, 'rotating-1');
    const next = makeCertificate(two, 'rotating-2');
    const files = { cert: join(one.dir, 'live.pem'), key: join(one.dir, 'live.key') };
    copyFileSync(first.cert, files.cert);
    copyFileSync(first.key, files.key);
    const server = await tlsTransport(files.cert, files.key, both);
    const follower = followers[followers.length - 1]!;
    const received = receivedHeartbeats(server);
    // This client trusts only the second authority: it cannot talk to the server until it presents a cert of it.
    const client = makeCertificate(two, 'rotating-client');
    const newcomer = await tlsTransport(client.cert, client.key, two.cert);
    newcomer.send(server.self, heartbeat(1));
    await waitFor(() => (server.tlsRefusals().get('aborted') ?? 0) > 0, 'the newcomer to hang up on the first cert');
    copyFileSync(next.cert, files.cert);
    await waitFor(() => follower.problems().length > 0, 'the mismatched key to be kept out');
    expect(follower.current.subject).toContain('rotating-1');
    copyFileSync(next.key, files.key);
    await waitFor(() => follower.current.subject.includes('rotating-2'), 'the new certificate');
    newcomer.send(server.self, heartbeat(2));
    await waitFor(() => received.some((m) => m.sequence === 2), 'a message on a new connection');
    expect(follower.problems()).toEqual([]);
  });
});
