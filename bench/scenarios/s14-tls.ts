// Scenario 14, what mutual TLS on the cluster port costs (issue 38), TLS 1.3 with client certificates against plain
// TCP in the same run: entity tells and sends between two node processes (S10's delivery nodes and workload), the
// raw frames per second a transport carries to another process (bench/lib/tls-echo.ts), and the cost of a new
// connection (connect, TLS handshake, cluster handshake, first message answered).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { NodeAddress } from '../../src/cluster/address.js';
import type { ClusterMessage } from '../../src/cluster/membership/messages.js';
import { TcpTransport } from '../../src/cluster/transport/tcp-transport.js';
import { MESSAGE_FAMILIES } from '../../src/protocol.js';
import { loadTlsMaterial, type TlsMaterial } from '../../src/tls/tls-files.js';
import { makeAuthority, makeCertificate } from '../../test/support/tls-certificates.js';
import { startDeliveryNodes, type DeliveryNode } from '../lib/delivery-cluster.js';
import type { BenchOptions, ScenarioResult } from '../lib/scenario.js';
import { IDS, place } from './s10-delivery.js';
import { fmt, fmtRatio, ratio, summarize } from '../lib/stats.js';
import type { Table } from '../lib/table.js';

const PAYLOAD = new Uint8Array(256).fill(7);

interface Mode {
  readonly name: 'plain' | 'tls';
  readonly env: Record<string, string>;
  readonly material: TlsMaterial | undefined;
}

interface Figures {
  readonly mode: Mode['name'];
  readonly messagesPerSecond: number;
  readonly connectMs: number;
}

export async function tlsCost(options: BenchOptions): Promise<ScenarioResult> {
  const messages = options.quick ? 20_000 : 100_000;
  const connects = options.quick ? 10 : 40;
  const authority = makeAuthority('bench-ca');
  const far = makeCertificate(authority, 'bench-far');
  const near = makeCertificate(authority, 'bench-near');
  const modes: Mode[] = [
    { name: 'plain', env: {}, material: undefined },
    {
      name: 'tls',
      env: { BENCH_TLS_CERT: far.cert, BENCH_TLS_KEY: far.key, BENCH_TLS_CA: authority.cert },
      material: loadTlsMaterial({ cert: near.cert, key: near.key, ca: authority.cert }),
    },
  ];
  const figures: Figures[] = [];
  for (const mode of modes) figures.push(await measure(mode, messages, connects));
  const entityMessages = options.quick ? 5_000 : 20_000;
  const files = [far, near].map(({ cert, key }) => ({ cert, key, ca: authority.cert }));
  const entities = [await entityThroughput(entityMessages), await entityThroughput(entityMessages, (i) => files[i]!)];
  return report(figures, messages, entities as [EntityThroughput, EntityThroughput], entityMessages);
}

interface EntityThroughput {
  readonly tellPerSecond: number;
  readonly sendPerSecond: number;
}

/** S10's remote tell and send between two delivery node processes, over TLS when `tlsOf` gives files. */
async function entityThroughput(
  messages: number,
  tlsOf?: (i: number) => { cert: string; key: string; ca: string },
): Promise<EntityThroughput> {
  const nodes = await startDeliveryNodes(2, tlsOf);
  const [a, b] = nodes as [DeliveryNode, DeliveryNode];
  try {
    const homes = { Remote: b.address, Local: a.address, Stateful: b.address, Plain: b.address };
    await Promise.all(nodes.map((n) => n.call('setHomes', homes)));
    await a.call('windowedSend', 'Remote', 500, IDS, 8);
    const { tellPerSecond, sendPerSecond } = await place(a, b, 'Remote', messages, 50);
    return { tellPerSecond, sendPerSecond };
  } finally {
    for (const node of nodes) node.kill();
  }
}

async function measure(mode: Mode, messages: number, connects: number): Promise<Figures> {
  const { child, address } = await startEcho(mode.env);
  try {
    const sender = await startSender(mode.material);
    try {
      await burst(sender, address, 1_000); // warm-up: JIT, connection, buffers
      const rates: number[] = [];
      for (let round = 0; round < 3; round++) {
        const started = performance.now();
        const arrived = await burst(sender, address, messages);
        if (arrived !== messages) throw new Error(`S14 ${mode.name}: ${arrived} of ${messages} arrived`);
        rates.push(messages / ((performance.now() - started) / 1000));
      }
      const times: number[] = [];
      for (let i = 0; i < connects; i++) times.push(await firstAnswerMs(mode.material, address));
      return { mode: mode.name, messagesPerSecond: Math.max(...rates), connectMs: summarize(times).median };
    } finally {
      await sender.close();
    }
  } finally {
    child.kill('SIGTERM');
  }
}

/** Sends `count` updates then asks how many arrived; resolves with the answer. */
async function burst(sender: TcpTransport, to: NodeAddress, count: number): Promise<number> {
  const answer = nextAck(sender);
  for (let i = 0; i < count; i++) sender.send(to, { type: 'PlacementUpdate', update: PAYLOAD });
  sender.send(to, { type: 'Heartbeat', sequence: count, incarnation: sender.incarnation });
  return answer;
}

/** A fresh sender's first question answered: a new connection end to end. */
async function firstAnswerMs(material: TlsMaterial | undefined, to: NodeAddress): Promise<number> {
  const sender = await startSender(material);
  try {
    const started = performance.now();
    await burst(sender, to, 0);
    return performance.now() - started;
  } finally {
    await sender.close();
  }
}

function nextAck(transport: TcpTransport): Promise<number> {
  return new Promise((resolve) => {
    const stop = transport.onMessage((_from, message) => {
      const answer = message as ClusterMessage;
      if (answer.type !== 'HeartbeatAck') return;
      stop();
      resolve(answer.sequence);
    });
  });
}

async function startSender(material: TlsMaterial | undefined): Promise<TcpTransport> {
  const transport = await TcpTransport.start({
    system: 'bench',
    maxQueuedMessages: 1_000_000,
    ...(material === undefined ? {} : { tls: { current: () => material } }),
  });
  for (const family of MESSAGE_FAMILIES) transport.register(family);
  return transport;
}

async function startEcho(env: Record<string, string>): Promise<{ child: ChildProcess; address: NodeAddress }> {
  const script = fileURLToPath(new URL('../lib/tls-echo.js', import.meta.url));
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`S14: the echo process exited (${code}) before listening`)));
  });
  return { child, address: NodeAddress.parse(first) };
}

function report(
  figures: readonly Figures[],
  messages: number,
  [plainEntities, tlsEntities]: readonly [EntityThroughput, EntityThroughput],
  entityMessages: number,
): ScenarioResult {
  const [plain, tls] = figures as [Figures, Figures];
  const throughput = ratio(tls.messagesPerSecond, plain.messagesPerSecond);
  const tell = ratio(tlsEntities.tellPerSecond, plainEntities.tellPerSecond);
  const send = ratio(tlsEntities.sendPerSecond, plainEntities.sendPerSecond);
  const entityTable: Table = {
    title: `S14 entity tell and send between 2 node processes (${entityMessages.toLocaleString('en')} messages, S10's workload)`,
    headers: ['what', 'plain TCP msg/s', 'mutual TLS 1.3 msg/s', 'TLS / plain'],
    rows: [
      ['tell', fmt(plainEntities.tellPerSecond, 0), fmt(tlsEntities.tellPerSecond, 0), fmtRatio(tell)],
      ['send', fmt(plainEntities.sendPerSecond, 0), fmt(tlsEntities.sendPerSecond, 0), fmtRatio(send)],
    ],
  };
  const table: Table = {
    title: `S14 TLS cost: ${messages.toLocaleString('en')} messages of 256 bytes to another process, best of 3; new connections, median`,
    headers: ['transport', 'messages/s', 'new connection to first answer (ms)'],
    rows: figures.map((f) => [
      f.mode === 'tls' ? 'mutual TLS 1.3' : 'plain TCP',
      fmt(f.messagesPerSecond, 0),
      fmt(f.connectMs, 2),
    ]),
  };
  return {
    id: 's14',
    title: 'TLS cost',
    tables: [entityTable, table],
    data: { figures, entities: { plain: plainEntities, tls: tlsEntities } },
    headlines: [
      `S14: over mutual TLS, entity tell runs at ${fmtRatio(tell)} and send at ${fmtRatio(send)} of plain TCP (goal >= 0.7x)`,
      `S14: mutual TLS carries ${fmtRatio(throughput)} of plain TCP's raw 256-byte frames per second (the record layer's own cost; the goal is the entity messages'); a new connection takes ${fmt(tls.connectMs, 2)} ms to its first answer with TLS, ${fmt(plain.connectMs, 2)} ms without`,
    ],
    panels: [],
  };
}
