// A cluster of real CLI node processes on loopback for the failover and scale scenarios (S11, S12): started
// from one seed, ordered by the Up numbers the cluster gave them (the oldest hosts the coordinator), restarted on its own
// ports after a kill, and read from outside: its resident memory (/proc) and, when started counting, the
// messages it sent by type (lib/counting-node.ts).
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { nodeAddress, waitForFormedCluster } from '../../test/support/node-cli.js';
import { freePorts } from '../../test/support/ports.js';
import { http } from '../../test/support/http.js';
import type { MembersAnswer } from '../../src/management/api-shapes.js';
import type { TrafficCounts } from './counting-node.js';
import type { RealNode } from './first-answer.js';
import { spawnNode } from './processes.js';

/** The CLI this checkout built; the counting wrapper runs the same `node` command. */
export const CLI_BIN = fileURLToPath(new URL('../../../bin/actor-ts-placement.js', import.meta.url));
export const COUNTING_BIN = fileURLToPath(new URL('./counting-node.js', import.meta.url));

export interface ClusterNode extends RealNode {
  /** performance.now() at its (re)start: the smallest is the oldest member, the coordinator's node. */
  startedAt: number;
  readonly index: number;
  readonly trafficFile: string;
}

export interface RealCluster {
  readonly nodes: ClusterNode[];
  readonly logDir: string;
  readonly bin: string;
  readonly logLevel: string;
  /** More flags of every node (`--entity-store ...`, S16). */
  readonly extraArgs: readonly string[];
}

export interface ClusterOptions {
  readonly count: number;
  /** Default: this checkout's CLI; pass another checkout's bin to measure that build. */
  readonly bin?: string;
  readonly logLevel?: string;
  readonly extraArgs?: readonly string[];
}

type NodeSpec = Pick<ClusterNode, 'port' | 'httpPort' | 'trafficFile'>;

function spawn(cluster: RealCluster, node: NodeSpec, seed: string, tag: string): ChildProcess {
  const env = cluster.bin === COUNTING_BIN ? { BENCH_TRAFFIC_FILE: node.trafficFile } : undefined;
  const log = join(cluster.logDir, `${tag}.log`);
  return spawnNode(cluster.bin, node, seed, log, cluster.logLevel, env, cluster.extraArgs);
}

/** Until every node lists every other Up (the e2e tests' own check); `timeoutMs` grows with the count. */
export function formed(nodes: readonly ClusterNode[]): Promise<void> {
  return waitForFormedCluster(
    nodes.map((n) => n.url),
    nodes.map((n) => n.address),
    { timeoutMs: 60_000 + 8_000 * nodes.length, intervalMs: nodes.length > 5 ? 500 : 200 },
  );
}

/** Starts `count` nodes joining through the first and waits until all are Up. */
export async function startCluster(options: ClusterOptions): Promise<RealCluster> {
  const ports = await freePorts(2 * options.count);
  const logDir = mkdtempSync(join(tmpdir(), 'actor-ts-real-'));
  const cluster: RealCluster = {
    nodes: [],
    logDir,
    bin: options.bin ?? COUNTING_BIN,
    logLevel: options.logLevel ?? 'warn',
    extraArgs: options.extraArgs ?? [],
  };
  const seed = nodeAddress(ports[0] as number);
  for (let i = 0; i < options.count; i++) {
    const port = ports[i] as number;
    const httpPort = ports[options.count + i] as number;
    const spec = {
      index: i,
      port,
      httpPort,
      address: nodeAddress(port),
      url: `http://127.0.0.1:${httpPort}`,
      trafficFile: join(logDir, `n${i}.traffic.json`),
      startedAt: performance.now() + i,
    };
    cluster.nodes.push({ ...spec, child: spawn(cluster, spec, seed, `n${i}`) });
  }
  try {
    await formed(cluster.nodes);
  } catch (error) {
    await killCluster(cluster);
    throw new Error(`${error instanceof Error ? error.message : String(error)} (node logs in ${logDir})`);
  }
  return cluster;
}

export function exited(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
}

/**
 * Starts `node` again on its ports (a new incarnation) once its process is gone, joining through `seed` (default:
 * the first other node).
 */
export async function restart(
  cluster: RealCluster,
  node: ClusterNode,
  tag: string,
  seed: ClusterNode = cluster.nodes.find((n) => n !== node)!,
): Promise<void> {
  await exited(node.child);
  node.child = spawn(cluster, node, seed.address, `n${node.index}-${tag}`);
  node.startedAt = performance.now();
}

/**
 * The nodes from the oldest member (the lowest Up number: the coordinator's node) to the youngest, as the first
 * node that answers GET /actor-ts/cluster/members sees them. Not by process start: nodes spawned together join in
 * any order, and a restarted node is the youngest whatever its spawn order was. Nodes without an Up number (none
 * answered, or not listed) come last, by start.
 */
export async function byAge(nodes: readonly ClusterNode[]): Promise<ClusterNode[]> {
  const upNumbers = new Map<string, number>();
  for (const node of nodes) {
    const answer = await http<MembersAnswer>('GET', `${node.url}/actor-ts/cluster/members`, undefined, 5_000).catch(
      () => undefined,
    );
    if (answer?.status !== 200) continue;
    for (const member of answer.body.members)
      if (member.status === 'up') upNumbers.set(member.address, member.upNumber);
    break;
  }
  const upNumber = (node: ClusterNode): number => upNumbers.get(node.address) ?? Infinity;
  return [...nodes].sort((a, b) => upNumber(a) - upNumber(b) || a.startedAt - b.startedAt);
}

/** Resident memory of a node process in MiB, from /proc; undefined when it cannot be read. */
export function rssMiB(child: ChildProcess): number | undefined {
  try {
    const line = readFileSync(`/proc/${child.pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line === undefined ? undefined : Number(line.replace(/\D+/g, '')) / 1024;
  } catch {
    return undefined;
  }
}

/** What a counting node last wrote; undefined before its first write or when not counting. */
export function readTraffic(node: ClusterNode): TrafficCounts | undefined {
  try {
    return JSON.parse(readFileSync(node.trafficFile, 'utf8')) as TrafficCounts;
  } catch {
    return undefined;
  }
}

/** Kills every node of the cluster (SIGKILL) and waits until they are gone. */
export async function killCluster(cluster: RealCluster): Promise<void> {
  for (const node of cluster.nodes) if (node.child.exitCode === null) node.child.kill('SIGKILL');
  await Promise.all(cluster.nodes.map((n) => exited(n.child)));
}
