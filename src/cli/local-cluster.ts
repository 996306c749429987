// `local-cluster`: starts N node processes on loopback, waits until each answers on its API, prints the
// URLs, and stops every child on Ctrl-C (SIGINT) or SIGTERM. Child logs go to files, not the terminal.
// Each child holds an IPC channel to this process and stops when it closes, so the nodes go away with
// this process however it ends (even SIGKILL). Every node gets every node's address as a seed, so a node
// restarted alone rejoins the running cluster. Node i keeps its placements in <dataDir>/node-i, so running
// it again brings them back (`fresh` wipes them first).
import { spawn, type ChildProcess } from 'node:child_process';
import { fstatSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { issueCertificate, makeAuthority } from '../tls/throwaway-ca.js';
import { ManagementClient } from './client.js';
import { refuseHeldDirectories, startFailure } from './local-cluster-checks.js';

/** How many nodes `local-cluster` starts unless told otherwise. */
export const DEFAULT_LOCAL_CLUSTER_NODES = 3;

/** Where `local-cluster` keeps its nodes' placements, relative to the working directory (git-ignored). */
export const DEFAULT_LOCAL_CLUSTER_DATA_DIR = join('.actor-ts', 'local-cluster');

export interface LocalClusterOptions {
  readonly nodes: number;
  readonly system: string;
  readonly host: string;
  readonly basePort: number;
  readonly baseHttpPort: number;
  readonly logDir?: string;
  /** Node i gets `<dataDir>/node-i` as its --data-dir; default DEFAULT_LOCAL_CLUSTER_DATA_DIR. */
  readonly dataDir?: string;
  /** Delete `dataDir` before starting: every node starts with no placements. */
  readonly fresh?: boolean;
  readonly authToken?: string;
  /** Every node's `--fallback` (the strategy for shards without a pin); default: the node's own default. */
  readonly fallback?: string;
  /** Extra arguments passed to every `node` child. */
  readonly nodeArgs?: readonly string[];
  /**
   * Mutual TLS on the cluster ports: a throwaway authority (openssl) in `<dataDir>/tls` signs each node's
   * certificate, made anew at every start. Default false.
   */
  readonly tls?: boolean;
  /** Per node (1-based): attributes `KEY=VALUE` passed as `--attribute` to that node only. */
  readonly nodeAttributes?: ReadonlyMap<number, readonly string[]>;
  /** Path of the CLI entry script the children run. */
  readonly binPath: string;
  readonly print?: (line: string) => void;
  readonly startTimeoutMs?: number;
}

export interface LocalCluster {
  readonly urls: readonly string[];
  readonly addresses: readonly string[];
  readonly children: readonly ChildProcess[];
  readonly logDir: string;
  /** The absolute data directory; node i's is `<dataDir>/node-i`. */
  readonly dataDir: string;
  /** SIGTERM every child, SIGKILL after `graceMs`; resolves when all have exited. */
  stop(graceMs?: number): Promise<void>;
}

export async function startLocalCluster(options: LocalClusterOptions): Promise<LocalCluster> {
  const print = options.print ?? ((line: string) => process.stdout.write(line + '\n'));
  const logDir = options.logDir ?? join(tmpdir(), `actor-ts-local-cluster-${process.pid}`);
  mkdirSync(logDir, { recursive: true });
  const dataDir = resolve(options.dataDir ?? DEFAULT_LOCAL_CLUSTER_DATA_DIR);
  // Before anything is deleted or started: a directory a running node holds is never wiped (its node would
  // go on committing into deleted files) and never shared (the new node would fail on the lock).
  refuseHeldDirectories(dataDir, options.nodes, options.fresh === true);
  if (options.fresh === true) rmSync(dataDir, { recursive: true, force: true });
  const addresses = Array.from(
    { length: options.nodes },
    (_, i) => `${options.system}@${options.host}:${options.basePort + i}`,
  );
  // Node 1 is the first seed everywhere: it alone may form a cluster when no other seed answers.
  const seedArgs = addresses.flatMap((address) => ['--seed', address]);
  const children: ChildProcess[] = [];
  const urls: string[] = [];
  const logs: Array<{ path: string; from: number }> = [];

  const tlsArgs = options.tls === true ? throwawayTls(join(dataDir, 'tls'), options.nodes) : undefined;
  if (tlsArgs !== undefined) print(`mutual TLS on the cluster ports: throwaway CA in ${join(dataDir, 'tls')}`);
  for (let i = 0; i < options.nodes; i++) {
    const httpPort = options.baseHttpPort + i;
    const logPath = join(logDir, `node-${i + 1}.log`);
    const log = openSync(logPath, 'a');
    // The log is appended to across runs: only what this run writes says why this run's node failed.
    logs.push({ path: logPath, from: fstatSync(log).size });
    const args = [...nodeArgs(options, i, dataDir, seedArgs), ...(tlsArgs?.[i] ?? [])];
    const child = spawn(process.execPath, args, { stdio: ['ignore', log, log, 'ipc'] });
    // The channel exists for its closing, not for messages: it must not keep this process alive.
    child.channel?.unref();
    children.push(child);
    urls.push(`http://${options.host}:${httpPort}`);
    child.on('exit', (code, signal) => {
      if (!stopping)
        print(
          `node ${i + 1} (${addresses[i]}) exited (${signal ?? `code ${code}`}); log: ${join(logDir, `node-${i + 1}.log`)}`,
        );
    });
  }

  let stopping = false;
  const stop = async (graceMs = 10_000): Promise<void> => {
    stopping = true;
    await Promise.all(children.map((child) => stopChild(child, graceMs)));
  };

  try {
    const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
    for (let i = 0; i < urls.length; i++) {
      const child = children[i]!;
      const exited = (): string | undefined =>
        child.exitCode !== null || child.signalCode !== null
          ? startFailure(i + 1, addresses[i] ?? '', child, logs[i]!)
          : undefined;
      await waitUntilUp(new ManagementClient(urls[i]!, { timeoutMs: 1000 }), child, exited, deadline, (status) =>
        print(`  waiting for node ${i + 1} (${status})...`),
      );
    }
  } catch (error) {
    await stop(2000);
    throw error;
  }
  return { urls, addresses, children, logDir, dataDir, stop };
}

/** The `node` command line of node i (0-based) of a local cluster. */
function nodeArgs(options: LocalClusterOptions, i: number, dataDir: string, seedArgs: readonly string[]): string[] {
  return [
    options.binPath,
    'node',
    '--system',
    options.system,
    '--host',
    options.host,
    '--port',
    String(options.basePort + i),
    '--http-host',
    options.host,
    '--http-port',
    String(options.baseHttpPort + i),
    ...seedArgs,
    '--data-dir',
    join(dataDir, `node-${i + 1}`),
    // One lmdb directory every node shares: the demo Counter is durable across a kill -9 with nothing to install.
    '--entity-store',
    `lmdb:${join(dataDir, 'entities')}`,
    ...(options.authToken ? ['--auth-token', options.authToken] : []),
    ...(options.fallback ? ['--fallback', options.fallback] : []),
    ...(options.nodeAttributes?.get(i + 1) ?? []).flatMap((attribute) => ['--attribute', attribute]),
    ...(options.nodeArgs ?? []),
  ];
}

/** A throwaway authority in `dir` and a certificate for each node: each node's `--tls-*` flags. */
function throwawayTls(dir: string, nodes: number): string[][] {
  const authority = makeAuthority(dir, 'local-cluster-ca');
  return Array.from({ length: nodes }, (_, i) => {
    const { cert, key } = issueCertificate(authority, `node-${i + 1}`);
    return ['--tls-cert', cert, '--tls-key', key, '--tls-ca', authority.cert];
  });
}

/**
 * Polls the node's health until it answers ok as the process this command started (its pid): a port that
 * answers may be another cluster's node, and a node that exited fails the start with its own reason.
 */
async function waitUntilUp(
  client: ManagementClient,
  child: ChildProcess,
  exited: () => string | undefined,
  deadline: number,
  progress: (status: string) => void,
): Promise<void> {
  let last = '';
  for (;;) {
    const failure = exited();
    if (failure !== undefined) throw new Error(failure);
    let status = 'not answering yet';
    try {
      const health = await client.health();
      if (health.pid !== child.pid) {
        status = `its API port answers for another process (pid ${String(health.pid ?? 'unknown')}, ${health.self})`;
      } else if (health.status === 'ok') {
        return;
      } else {
        status = `member status ${health.memberStatus ?? 'unknown'}`;
      }
    } catch {
      // Not listening yet: keep polling until the deadline.
    }
    if (Date.now() > deadline) throw new Error(`node did not become ready in time (${status})`);
    if (status !== last) progress(status);
    last = status;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
export function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
