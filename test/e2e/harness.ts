// Multi-process test harness: starts real node processes through the compiled CLI (bin/actor-ts-placement.js),
// talks HTTP to the nodes, and SIGKILLs whatever it started. Ports, polling, HTTP calls, process handles and the
// node command line are the shared ones of test/support/, re-exported here under the names the e2e tests use.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { http, httpOk, type HttpResult } from '../support/http.js';
import {
  nodeAddress,
  nodeCommandArgs,
  waitForFormedCluster,
  type MembersAnswer,
  type NodeCommandOptions,
} from '../support/node-cli.js';
import { poll, sleep } from '../support/poll.js';
import { freePorts } from '../support/ports.js';
import { Proc } from '../support/processes.js';

export { freeConsecutivePorts, freePorts, portIsFree } from '../support/ports.js';
import { freeConsecutivePorts } from '../support/ports.js';
export { http, httpOk, type HttpResult } from '../support/http.js';
export { Proc, childPids, exitWithin, firstLogAt, pidGone, type ExitInfo } from '../support/processes.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'actor-ts-placement.js');
export const COUNTER = 'Counter';
export const SHARDS_PATH = `/actor-ts/cluster/shards/${COUNTER}`;

/** Fails the suite up front with a useful message rather than letting every node process die obscurely. */
export function requireBuild(): void {
  if (!existsSync(join(ROOT, 'dist', 'src', 'cli', 'main.js'))) {
    throw new Error('dist/ is missing: run `npm run build` before the e2e tests');
  }
}

// ---------------------------------------------------------------------------------------------- polling

export { sleep };

/**
 * Polls `probe` until it returns a value other than undefined/false, or throws after `timeoutMs` naming
 * `what` and the last error or value seen. A probe that throws counts as "not yet".
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<T> {
  return poll(what, probe, { timeoutMs, intervalMs });
}

// ---------------------------------------------------------------------------------------------- http

export interface CounterValue {
  readonly entityId: string;
  readonly shardId: number;
  readonly value: number;
  readonly node: string;
}

export interface ShardLocations {
  readonly regions: ReadonlyArray<{ readonly address: string; readonly shards: readonly number[] }>;
  /** Shards being handed off (still listed under the region they leave). */
  readonly handingOff: readonly number[];
}

export interface PlacementRow {
  readonly shardId: number;
  readonly target: string;
  readonly writer: string;
  readonly hlc: { readonly wallMs: number; readonly counter: number; readonly node: string };
}

/** shardId -> region address, from a ShardLocations answer. */
export function homesOf(locations: ShardLocations): Map<number, string> {
  const homes = new Map<number, string>();
  for (const region of locations.regions) for (const shard of region.shards) homes.set(shard, region.address);
  return homes;
}

// ---------------------------------------------------------------------------------------------- processes

/** A running `node` command of the CLI. */
export class NodeProc extends Proc {
  constructor(
    name: string,
    child: ChildProcess,
    logFile: string,
    readonly address: string,
    readonly url: string,
    readonly port: number,
    readonly httpPort: number,
  ) {
    super(name, child, logFile);
  }

  get<T>(path: string, timeoutMs?: number): Promise<HttpResult<T>> {
    return http<T>('GET', this.url + path, undefined, timeoutMs);
  }

  post<T>(path: string, body: unknown, timeoutMs?: number): Promise<HttpResult<T>> {
    return http<T>('POST', this.url + path, body, timeoutMs);
  }

  increment(entityId: string, timeoutMs?: number): Promise<HttpResult<CounterValue>> {
    return this.post<CounterValue>(`/counters/${encodeURIComponent(entityId)}/increment`, undefined, timeoutMs);
  }

  counter(entityId: string, timeoutMs?: number): Promise<HttpResult<CounterValue>> {
    return this.get<CounterValue>(`/counters/${encodeURIComponent(entityId)}`, timeoutMs);
  }

  async shards(): Promise<ShardLocations> {
    return httpOk<ShardLocations>('GET', this.url + SHARDS_PATH);
  }

  async placements(): Promise<PlacementRow[]> {
    return (await httpOk<{ placements: PlacementRow[] }>('GET', this.url + `${SHARDS_PATH}/placements`)).placements;
  }
}

/**
 * Owns every process one test file starts and a temp directory for their logs. `killAll()` (call it from
 * afterEach) SIGKILLs what is still running, including a detached process's whole group.
 */
export class ProcessSet {
  readonly logDir = mkdtempSync(join(tmpdir(), 'actor-ts-e2e-'));
  private readonly procs: Proc[] = [];
  private sequence = 0;

  /** Spawns `node bin/actor-ts-placement.js ...args` with stdout and stderr to a log file. */
  spawnCli(name: string, args: readonly string[], options: { detached?: boolean } = {}): Proc {
    const { child, logFile } = this.spawn(name, args, options.detached ?? false);
    const proc = new Proc(name, child, logFile, options.detached ?? false);
    this.procs.push(proc);
    return proc;
  }

  private spawn(
    name: string,
    args: readonly string[],
    detached: boolean,
    release: Pick<NodeStartOptions, 'nodeArgs' | 'bin' | 'env'> = {},
  ): { child: ChildProcess; logFile: string } {
    const logFile = join(this.logDir, `${++this.sequence}-${name}.log`);
    const fd = openSync(logFile, 'a');
    try {
      const child = spawn(process.execPath, [...(release.nodeArgs ?? []), release.bin ?? BIN, ...args], {
        cwd: ROOT,
        stdio: ['ignore', fd, fd],
        detached,
        env: release.env === undefined ? process.env : { ...process.env, ...release.env },
      });
      return { child, logFile };
    } finally {
      // The child holds its own copy of the descriptor.
      closeSync(fd);
    }
  }

  /** Starts one `node` process and returns at once; startCluster waits for the nodes to form a cluster. */
  startNode(options: NodeStartOptions): NodeProc {
    const address = nodeAddress(options.port);
    const args = nodeCommandArgs(options);
    const { child, logFile } = this.spawn(options.name, args, false, options);
    const node = new NodeProc(
      options.name,
      child,
      logFile,
      address,
      `http://127.0.0.1:${options.httpPort}`,
      options.port,
      options.httpPort,
    );
    this.procs.push(node);
    return node;
  }

  /**
   * Starts `count` nodes seeded by the first, and waits until every node reports health ok and sees all
   * `count` members up. Retries once with fresh ports when a node dies while starting (a port taken meanwhile).
   */
  async startCluster(count: number, options: ClusterStartOptions = {}): Promise<NodeProc[]> {
    for (let attempt = 1; ; attempt++) {
      const ports = await freePorts(count * 2);
      const seed = `app@127.0.0.1:${ports[0]}`;
      const nodes: NodeProc[] = [];
      for (let i = 0; i < count; i++) {
        nodes.push(
          this.startNode({
            ...options,
            name: `node${i + 1}`,
            port: ports[2 * i]!,
            httpPort: ports[2 * i + 1]!,
            seed,
            ...(options.dataDirOf !== undefined ? { dataDir: options.dataDirOf(i) } : {}),
            ...(options.argsOf !== undefined ? { extraArgs: options.argsOf(i) } : {}),
          }),
        );
      }
      try {
        await waitForCluster(nodes, options.startTimeoutMs ?? 45_000);
        return nodes;
      } catch (error) {
        const died = nodes.some((node) => node.hasExited);
        for (const node of nodes) node.signal('SIGKILL');
        await Promise.all(nodes.map((node) => node.exited));
        if (!died || attempt >= 2) throw error;
      }
    }
  }

  /** SIGKILLs every process still running (detached ones with their whole process group) and waits for them. */
  async killAll(): Promise<void> {
    for (const proc of this.procs) {
      // A detached leader may be gone while children it failed to stop live on in its group.
      if (proc.detached && proc.pid > 1) {
        try {
          process.kill(-proc.pid, 'SIGKILL');
        } catch {
          // Group already gone.
        }
      }
      proc.signal('SIGKILL');
    }
    await Promise.all(this.procs.map((proc) => proc.exited));
  }

  /** Log tails of every process, for a failed test's output. */
  describe(): string {
    return this.procs
      .map((proc) => `----- ${proc.name} (pid ${proc.pid}, ${proc.logFile})\n${proc.logTail()}`)
      .join('\n');
  }

  removeLogs(): void {
    rmSync(this.logDir, { recursive: true, force: true });
  }
}

export interface NodeStartOptions extends NodeCommandOptions {
  readonly name: string;
  /** Options for the `node` executable itself (before the CLI's path), e.g. `--import` of a test hook. */
  readonly nodeArgs?: readonly string[];
  /** The CLI to run (another release's `bin/actor-ts-placement.js`); this tree's by default. */
  readonly bin?: string;
  /** Variables added to the test's environment for this process. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface ClusterStartOptions {
  readonly downAfterMs?: number;
  readonly rebalanceIntervalMs?: number;
  readonly compactAfterItems?: number;
  readonly httpMaxConnections?: number;
  readonly logLevel?: string;
  readonly startTimeoutMs?: number;
  readonly nodeArgs?: readonly string[];
  readonly bin?: string;
  readonly appVersion?: string;
  /** `--data-dir` of node i (0-based), so a node started again on the same ports finds its placements. */
  readonly dataDirOf?: (index: number) => string;
  /** More flags of node i (0-based): its own certificate, say. */
  readonly argsOf?: (index: number) => readonly string[];
}

/** Every node healthy and seeing exactly `nodes` as up and reachable members; a node that exits ends the wait. */
export async function waitForCluster(nodes: readonly NodeProc[], timeoutMs: number): Promise<void> {
  await waitForFormedCluster(
    nodes.map((node) => node.url),
    nodes.map((node) => node.address),
    {
      timeoutMs,
      failure: () => {
        const dead = nodes.find((node) => node.hasExited);
        return dead === undefined ? undefined : `${dead.name} exited while starting:\n${dead.logTail(10)}`;
      },
    },
  );
}

/** The members a node sees as up (or weakly up) and reachable. */
export async function liveMembers(node: NodeProc): Promise<string[]> {
  const view = await httpOk<MembersAnswer>('GET', node.url + '/actor-ts/cluster/members', undefined, 3000);
  return view.members
    .filter((member) => (member.status === 'up' || member.status === 'weakly-up') && member.reachable)
    .map((member) => member.address)
    .sort();
}

/**
 * One ProcessSet for a test file, with the suite lifecycle every e2e file needs: the build is checked first,
 * every process is killed after each test (even a failed one), and logs are kept when something failed.
 */
export function useProcessSet(): ProcessSet {
  const procs = new ProcessSet();
  let failed = false;
  beforeAll(() => requireBuild());
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail') {
      failed = true;
      console.log(procs.describe());
    }
    // local-cluster runs detached, as the leader of its own process group: killAll kills its nodes too.
    await procs.killAll();
  });
  afterAll(async () => {
    await procs.killAll();
    if (!failed && process.env['E2E_KEEP_LOGS'] === undefined) procs.removeLogs();
    else console.log(`e2e logs kept in ${procs.logDir}`);
  });
  return procs;
}

/** The last line `local-cluster` prints once every node answers. */
export const LOCAL_CLUSTER_BANNER = 'Ctrl-C stops every node.';

export interface LocalClusterPorts {
  readonly basePort: number;
  readonly baseHttpPort: number;
}

/** Base ports for `local-cluster --nodes <nodes>`: that many consecutive free cluster ports, and API ports. */
export async function freeLocalClusterPorts(nodes = 3): Promise<LocalClusterPorts> {
  const basePort = await freeConsecutivePorts(nodes);
  const taken = new Set(Array.from({ length: nodes }, (_, i) => basePort + i));
  return { basePort, baseHttpPort: await freeConsecutivePorts(nodes, taken) };
}

export interface LocalClusterCommand {
  readonly ports: LocalClusterPorts;
  /** Never the working directory's default .actor-ts/: tests must not share (or lock) a data directory. */
  readonly dataDir: string;
  readonly logDir?: string;
  readonly nodes?: number;
  readonly extra?: readonly string[];
}

/** The arguments of one `local-cluster` command. */
export function localClusterArgs(command: LocalClusterCommand): string[] {
  return [
    'local-cluster',
    '--nodes',
    String(command.nodes ?? 3),
    '--base-port',
    String(command.ports.basePort),
    '--base-http-port',
    String(command.ports.baseHttpPort),
    ...(command.logDir !== undefined ? ['--log-dir', command.logDir] : []),
    '--data-dir',
    command.dataDir,
    ...(command.extra ?? []),
  ];
}

/** Waits until a `local-cluster` process printed its banner and returns its output; fails at once if it exited. */
export async function waitForBanner(cluster: Proc, what = 'local-cluster to print its node table'): Promise<string> {
  return poll(what, () => (cluster.log().includes(LOCAL_CLUSTER_BANNER) ? cluster.log() : undefined), {
    timeoutMs: 60_000,
    giveUp: () => (cluster.hasExited ? `local-cluster exited early:\n${cluster.log()}` : undefined),
  });
}

/**
 * Starts `local-cluster --nodes 3` on free ports, with logs and data under `name` in the test's log directory
 * (unless `dataDir` says where), and waits until it printed its table and all three see each other up.
 */
export async function startLocalCluster(
  procs: ProcessSet,
  name: string,
  options: { readonly dataDir?: string; readonly extra?: readonly string[] } = {},
) {
  const ports = await freeLocalClusterPorts();
  const { basePort, baseHttpPort } = ports;
  const dataDir = options.dataDir ?? join(procs.logDir, `${name}-data`);
  const args = localClusterArgs({ ports, dataDir, logDir: join(procs.logDir, name), extra: options.extra ?? [] });
  const cluster = procs.spawnCli(name, args, { detached: true });
  const output = await waitForBanner(cluster);
  const urls = [0, 1, 2].map((i) => `http://127.0.0.1:${baseHttpPort + i}`);
  for (const url of urls) {
    await waitFor(
      `${url} to see three members up`,
      async () => {
        const members = await http<{ members: Array<{ status: string }> }>('GET', `${url}/actor-ts/cluster/members`);
        return members.status === 200 && members.body.members.filter((m) => m.status === 'up').length === 3;
      },
      20_000,
    );
  }
  const addresses = [0, 1, 2].map((i) => `app@127.0.0.1:${basePort + i}`);
  return { cluster, basePort, baseHttpPort, ports, urls, addresses, output };
}
