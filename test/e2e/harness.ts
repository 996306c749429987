// Multi-process test harness: starts real node processes through the compiled CLI (bin/actor-ts-placement.js),
// picks free loopback ports, talks HTTP to the nodes, polls with deadlines, and SIGKILLs whatever it started.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll } from 'vitest';

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

// ---------------------------------------------------------------------------------------------- ports

function probePort(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/** `count` distinct ports that were free a moment ago (the kernel picks them; held together so none repeats). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('no port');
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  return ports;
}

/** A base port such that base .. base + count - 1 are all free (local-cluster numbers its nodes consecutively). */
export async function freeConsecutivePorts(count: number, avoid: ReadonlySet<number> = new Set()): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    // Below the Linux ephemeral range, so outgoing connections are unlikely to take the ports meanwhile.
    const base = 20_000 + Math.floor(Math.random() * 12_000);
    let ok = true;
    for (let i = 0; i < count && ok; i++) ok = !avoid.has(base + i) && (await probePort(base + i)) === base + i;
    if (ok) return base;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

/** True when nothing listens on 127.0.0.1:port any more. */
export async function portIsFree(port: number): Promise<boolean> {
  return (await probePort(port)) === port;
}

// ---------------------------------------------------------------------------------------------- polling

export async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

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
  const deadline = Date.now() + timeoutMs;
  let last: unknown = 'nothing yet';
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (error) {
      last = error instanceof Error ? error.message : error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`);
    await sleep(intervalMs);
  }
}

// ---------------------------------------------------------------------------------------------- http

export interface HttpResult<T = unknown> {
  readonly status: number;
  readonly body: T;
}

/** One HTTP call; a network error or client-side timeout is status 0 (never thrown), so callers can count it. */
export async function http<T = unknown>(method: string, url: string, body?: unknown, timeoutMs = 10_000): Promise<HttpResult<T>> {
  try {
    const response = await fetch(url, {
      method,
      ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed as T };
  } catch (error) {
    return { status: 0, body: { error: 'network', message: error instanceof Error ? error.message : String(error) } as T };
  }
}

/** Like http() but throws unless the status is 2xx; for calls that must work. */
export async function httpOk<T = unknown>(method: string, url: string, body?: unknown, timeoutMs = 10_000): Promise<T> {
  const result = await http<T>(method, url, body, timeoutMs);
  if (result.status < 200 || result.status > 299) {
    throw new Error(`${method} ${url} -> ${result.status} ${JSON.stringify(result.body)}`);
  }
  return result.body;
}

export interface CounterValue {
  readonly entityId: string;
  readonly shardId: number;
  readonly value: number;
  readonly node: string;
}

export interface ShardLocations {
  readonly regions: ReadonlyArray<{ readonly address: string; readonly shards: readonly number[] }>;
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

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** One spawned OS process with its log file. */
export class Proc {
  readonly exited: Promise<ExitInfo>;
  private exitInfo: ExitInfo | undefined;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly logFile: string,
    /** Leader of its own process group: killAll() kills the group, descendants included. */
    readonly detached = false,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
      // A process that could not be spawned never emits 'exit'; without this, killAll would wait forever.
      child.once('error', () => {
        if (child.pid !== undefined) return;
        this.exitInfo = { code: null, signal: null };
        resolve(this.exitInfo);
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  signal(signal: NodeJS.Signals): void {
    if (!this.hasExited) this.child.kill(signal);
  }

  logTail(lines = 40): string {
    return this.log().split('\n').slice(-lines).join('\n');
  }

  log(): string {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }
}

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

  private spawn(name: string, args: readonly string[], detached: boolean): { child: ChildProcess; logFile: string } {
    const logFile = join(this.logDir, `${++this.sequence}-${name}.log`);
    const fd = openSync(logFile, 'a');
    try {
      const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', fd, fd], detached });
      return { child, logFile };
    } finally {
      // The child holds its own copy of the descriptor.
      closeSync(fd);
    }
  }

  /** Starts one `node` process and returns at once; startCluster waits for the nodes to form a cluster. */
  startNode(options: NodeStartOptions): NodeProc {
    const address = `app@127.0.0.1:${options.port}`;
    const args = [
      'node',
      '--system', 'app',
      '--host', '127.0.0.1',
      '--port', String(options.port),
      '--http-port', String(options.httpPort),
      '--seed', options.seed,
      '--log-level', options.logLevel ?? 'info',
      ...(options.downAfterMs !== undefined ? ['--down-after-ms', String(options.downAfterMs)] : []),
      ...(options.rebalanceIntervalMs !== undefined ? ['--rebalance-interval-ms', String(options.rebalanceIntervalMs)] : []),
      ...(options.compactAfterItems !== undefined ? ['--compact-after-items', String(options.compactAfterItems)] : []),
    ];
    const { child, logFile } = this.spawn(options.name, args, false);
    const node = new NodeProc(options.name, child, logFile, address, `http://127.0.0.1:${options.httpPort}`, options.port, options.httpPort);
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
    return this.procs.map((proc) => `----- ${proc.name} (pid ${proc.pid}, ${proc.logFile})\n${proc.logTail()}`).join('\n');
  }

  removeLogs(): void {
    rmSync(this.logDir, { recursive: true, force: true });
  }
}

export interface NodeStartOptions {
  readonly name: string;
  readonly port: number;
  readonly httpPort: number;
  readonly seed: string;
  readonly downAfterMs?: number;
  readonly rebalanceIntervalMs?: number;
  readonly compactAfterItems?: number;
  readonly logLevel?: string;
}

export interface ClusterStartOptions {
  readonly downAfterMs?: number;
  readonly rebalanceIntervalMs?: number;
  readonly compactAfterItems?: number;
  readonly logLevel?: string;
  readonly startTimeoutMs?: number;
}

interface MembersAnswer {
  readonly self: string;
  readonly members: ReadonlyArray<{ readonly address: string; readonly status: string; readonly reachable: boolean }>;
}

/** Every node healthy and seeing exactly `nodes` as up and reachable members. */
export async function waitForCluster(nodes: readonly NodeProc[], timeoutMs: number): Promise<void> {
  const expected = nodes.map((node) => node.address).sort();
  await waitFor(
    `${nodes.length} nodes up and agreeing on membership`,
    async () => {
      for (const node of nodes) {
        if (node.hasExited) throw new Error(`${node.name} exited while starting:\n${node.logTail(10)}`);
      }
      const views = await Promise.all(nodes.map((node) => node.get<MembersAnswer>('/actor-ts/cluster/members', 2000)));
      return views.every(
        (view) =>
          view.status === 200 &&
          JSON.stringify(
            view.body.members
              .filter((member) => member.status === 'up' && member.reachable)
              .map((member) => member.address)
              .sort(),
          ) === JSON.stringify(expected),
      );
    },
    timeoutMs,
    150,
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

/** The process's exit, or an error once `ms` passed without one. */
export async function exitWithin(proc: Proc, ms: number): Promise<ExitInfo> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      proc.exited,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${proc.name} still running ${ms} ms after the signal`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** True when no process with this pid exists (a zombie counts as gone: it runs nothing and holds no port). */
export function pidGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Pids whose parent is `parent` (Linux /proc); empty where /proc is not available. */
export function childPids(parent: number): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === parent) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}


/** The earliest pino `time` at or after `after` of a log line whose msg contains `text`, across these processes. */
export function firstLogAt(processes: readonly Proc[], text: string, after: number): number | undefined {
  let first: number | undefined;
  for (const proc of processes) {
    for (const line of proc.log().split('\n')) {
      if (!line.includes(text)) continue;
      try {
        const entry = JSON.parse(line) as { time?: unknown; msg?: unknown };
        if (typeof entry.time !== 'number' || typeof entry.msg !== 'string' || !entry.msg.includes(text) || entry.time < after) continue;
        if (first === undefined || entry.time < first) first = entry.time;
      } catch {
        // Not a pino line.
      }
    }
  }
  return first;
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
