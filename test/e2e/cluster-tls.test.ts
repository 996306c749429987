// Mutual TLS on the cluster port (issue 38), on real processes with real certificates (openssl, two authorities):
// three CLI nodes with certificates of one authority form a cluster and serve entities across it, while a capture of
// their cluster ports (tcpdump on loopback) holds no byte of the entity ids that crossed; a node with a certificate
// of the other authority, and a node speaking plain TCP, never join, and the members log why.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeAuthority, makeCertificate, type TestAuthority } from '../support/tls-certificates.js';
import { freePorts, startLocalCluster, useProcessSet, waitFor, type NodeProc } from './harness.js';

const procs = useProcessSet();
let trusted: TestAuthority;
let other: TestAuthority;

/** A node's TLS flags: a certificate `signer` signed, trusting the cluster's authority (a stranger's cert, if `other`). */
const tlsArgs = (signer: TestAuthority, name: string): string[] => {
  const { cert, key } = makeCertificate(signer, name);
  return ['--tls-cert', cert, '--tls-key', key, '--tls-ca', trusted.cert];
};

beforeAll(() => {
  trusted = makeAuthority('cluster-ca');
  other = makeAuthority('other-ca');
});

/** tcpdump on loopback for the cluster ports, writing to `file`; resolves once it captures. */
async function capture(ports: readonly number[], file: string): Promise<{ stop(): Promise<void> }> {
  const filter = ports.map((port) => `tcp port ${port}`).join(' or ');
  const child = spawn('tcpdump', ['-i', 'lo', '--immediate-mode', '-U', '-w', file, filter], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const spawned = await new Promise<boolean>((resolve) => {
    child.once('error', () => resolve(false));
    child.once('spawn', () => resolve(true));
  });
  if (!spawned) throw new Error('tcpdump is missing: run as root: apt-get update && apt-get install -y tcpdump');
  await waitFor('tcpdump to listen', () => stderr.includes('listening on'), 10_000, 20);
  return {
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGINT');
      }),
  };
}

/** Entities asked through `via` until `count` of them live on another node: their messages cross the cluster port. */
async function remoteEntities(via: NodeProc, marker: string, count: number): Promise<number> {
  let remote = 0;
  for (let i = 0; remote < count && i < 200; i++) {
    const result = await via.increment(`${marker}-${i}`);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    if (result.body.node !== via.address) remote++;
  }
  return remote;
}

describe('mutual TLS on the cluster port', () => {
  it('the capture sees the entity ids on a cluster without TLS (so its silence under TLS means something)', async () => {
    const nodes = await procs.startCluster(2);
    const pcap = join(procs.logDir, 'plain.pcap');
    const tcpdump = await capture(
      nodes.map((node) => node.port),
      pcap,
    );
    const marker = 'PLAINTEXT-MARKER-c0de';
    expect(await remoteEntities(nodes[0]!, marker, 3)).toBe(3);
    await tcpdump.stop();
    expect(readFileSync(pcap).includes(Buffer.from(marker))).toBe(true);
  }, 60_000);

  it('three nodes of one authority form a cluster and nothing of their messages is readable on the wire', async () => {
    const nodes = await procs.startCluster(3, { argsOf: (i) => tlsArgs(trusted, `node${i + 1}`) });
    const pcap = join(procs.logDir, 'cluster.pcap');
    const tcpdump = await capture(
      nodes.map((node) => node.port),
      pcap,
    );
    const marker = 'PLAINTEXT-MARKER-7f3a';
    expect(await remoteEntities(nodes[0]!, marker, 5)).toBe(5);
    await tcpdump.stop();
    const bytes = readFileSync(pcap);
    // The capture holds the exchanges (pcap header 24 bytes, each packet 16 + its bytes): not a vacuous pass.
    expect(bytes.length).toBeGreaterThan(4_000);
    expect(bytes.includes(Buffer.from(marker))).toBe(false);
    expect(bytes.includes(Buffer.from('Counter'))).toBe(false);

    // A node whose certificate another authority signed, and one speaking plain TCP, are refused by the members.
    const [roguePort, rogueHttp, plainPort, plainHttp] = await freePorts(4);
    const seed = nodes[0]!.address;
    const rogue = procs.startNode({
      name: 'rogue',
      port: roguePort!,
      httpPort: rogueHttp!,
      seed,
      extraArgs: tlsArgs(other, 'rogue'),
    });
    const plain = procs.startNode({ name: 'plain', port: plainPort!, httpPort: plainHttp!, seed });
    const refusals = () =>
      nodes[0]!
        .log()
        .split('\n')
        .filter((line) => line.includes('refused: TLS handshake failed'));
    await waitFor(
      'the first member to refuse both newcomers',
      () =>
        refusals().some((l) => l.includes('untrusted_certificate')) && refusals().some((l) => l.includes('not_tls')),
      30_000,
    );
    const members = (await nodes[0]!.get<{ members: Array<{ address: string }> }>('/actor-ts/cluster/members')).body;
    expect(members.members.map((m) => m.address).sort()).toEqual(nodes.map((node) => node.address).sort());
    expect(rogue.hasExited || plain.hasExited).toBe(false);
    // Counted by reason, and the node's certificate's days left exported for the 14-day alert.
    const metrics = await (await fetch(`${nodes[0]!.url}/metrics`)).text();
    expect(metrics).toMatch(/^actor_ts_tls_handshakes_failed_total\{reason="untrusted_certificate"\} [1-9]/m);
    expect(metrics).toMatch(/^actor_ts_tls_handshakes_failed_total\{reason="not_tls"\} [1-9]/m);
    const days = Number(/^actor_ts_tls_certificate_expiry_days\{port="cluster"\} (\S+)$/m.exec(metrics)?.[1]);
    expect(days).toBeGreaterThan(1);
    expect(days).toBeLessThanOrEqual(2);
  }, 120_000);

  it('local-cluster --tls starts three nodes with a throwaway authority, speaking TLS to each other', async () => {
    const { cluster, output } = await startLocalCluster(procs, 'local-cluster-tls', { extra: ['--tls'] });
    expect(output).toMatch(/mutual TLS on the cluster ports: throwaway CA in .*tls/);
    const log = readFileSync(join(procs.logDir, 'local-cluster-tls', 'node-1.log'), 'utf8');
    expect(log).toMatch(/"tls":true.*tcp transport listening/);
    cluster.signal('SIGINT');
    await cluster.exited;
  }, 90_000);
});
