// Real node processes for the loopback scenario: free ports, spawning the CLI, waiting until the cluster
// is formed, and stopping every child whatever happens (SIGTERM, then SIGKILL; also on the bench's exit).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopChild } from '../../src/cli/local-cluster.js';

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = (): void => {
    for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}

/** Ports the OS just handed out for listening, released again (a small race, fine on loopback). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () =>
      new Promise<import('node:net').Server>((resolve, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve(server));
      }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

export interface NodeProcesses {
  readonly urls: readonly string[];
  readonly addresses: readonly string[];
  readonly logDir: string;
  stop(): Promise<void>;
}

export async function startNodes(binPath: string, count: number): Promise<NodeProcesses> {
  installExitHook();
  const ports = await freePorts(2 * count);
  const logDir = mkdtempSync(join(tmpdir(), 'actor-ts-bench-'));
  const addresses = ports.slice(0, count).map((port) => `app@127.0.0.1:${port}`);
  const urls = ports.slice(count).map((port) => `http://127.0.0.1:${port}`);
  const children: ChildProcess[] = [];
  for (let i = 0; i < count; i++) {
    const log = openSync(join(logDir, `node-${i + 1}.log`), 'a');
    const args = [
      binPath, 'node',
      '--system', 'app',
      '--host', '127.0.0.1',
      '--port', String(ports[i]),
      '--http-port', String(ports[count + i]),
      '--seed', addresses[0] as string,
      '--log-level', 'warn',
    ];
    const child = spawn(process.execPath, args, { stdio: ['ignore', log, log] });
    live.add(child);
    child.once('exit', () => live.delete(child));
    children.push(child);
  }
  const stop = async (): Promise<void> => {
    await Promise.all(children.map((child) => stopChild(child, 3000)));
  };
  try {
    await waitForCluster(urls, count, children, 60_000);
  } catch (error) {
    await stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)} (node logs in ${logDir})`);
  }
  return { urls, addresses, logDir, stop };
}

async function waitForCluster(urls: readonly string[], count: number, children: readonly ChildProcess[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (children.some((child) => child.exitCode !== null || child.signalCode !== null)) throw new Error('a node process exited while starting');
    const views = await Promise.all(urls.map((url) => upMembers(url)));
    if (views.every((up) => up === count)) return;
    if (Date.now() > deadline) throw new Error(`cluster of ${count} did not form in ${timeoutMs} ms (up members seen: ${views.join(', ')})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function upMembers(url: string): Promise<number> {
  try {
    const response = await fetch(`${url}/actor-ts/cluster/members`, { signal: AbortSignal.timeout(2000) });
    if (!response.ok) return -1;
    const body = (await response.json()) as { members: Array<{ status: string; reachable: boolean }> };
    return body.members.filter((member) => member.status === 'up' && member.reachable).length;
  } catch {
    return -1;
  }
}

