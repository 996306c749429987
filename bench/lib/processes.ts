// Real node processes for the loopback scenario: spawning the CLI and stopping every child whatever happens
// (SIGTERM, then SIGKILL; also on the bench's exit). Free ports, the node command line and the wait until the
// cluster is formed are the e2e tests' own (test/support/), so both start nodes the same way.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopChild } from '../../src/cli/local-cluster.js';
import { nodeAddress, nodeCommandArgs, waitForFormedCluster } from '../../test/support/node-cli.js';
import { freePorts } from '../../test/support/ports.js';

export { freePorts };

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', killAllNodes);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAllNodes();
      process.exit(130);
    });
  }
}

export interface NodeProcesses {
  readonly urls: readonly string[];
  readonly addresses: readonly string[];
  readonly logDir: string;
  stop(): Promise<void>;
}

/**
 * One CLI node process logging to `logPath`, killed with the bench whatever ends it (the same exit hook as
 * startNodes'). `seed` is the address it joins through; `env` adds to the bench's environment.
 */
export function spawnNode(
  binPath: string,
  node: { readonly port: number; readonly httpPort: number },
  seed: string,
  logPath: string,
  logLevel = 'warn',
  env?: Readonly<Record<string, string>>,
  extraArgs: readonly string[] = [],
): ChildProcess {
  installExitHook();
  const log = openSync(logPath, 'a');
  const args = [binPath, ...nodeCommandArgs({ port: node.port, httpPort: node.httpPort, seed, logLevel, extraArgs })];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', log, log],
    ...(env === undefined ? {} : { env: { ...process.env, ...env } }),
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Kills every node process the bench started (SIGKILL). */
export function killAllNodes(): void {
  for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

export async function startNodes(binPath: string, count: number): Promise<NodeProcesses> {
  const ports = await freePorts(2 * count);
  const logDir = mkdtempSync(join(tmpdir(), 'actor-ts-bench-'));
  const addresses = ports.slice(0, count).map(nodeAddress);
  const urls = ports.slice(count).map((port) => `http://127.0.0.1:${port}`);
  const children: ChildProcess[] = [];
  for (let i = 0; i < count; i++) {
    children.push(
      spawnNode(
        binPath,
        { port: ports[i] as number, httpPort: ports[count + i] as number },
        addresses[0] as string,
        join(logDir, `node-${i + 1}.log`),
      ),
    );
  }
  const stop = async (): Promise<void> => {
    await Promise.all(children.map((child) => stopChild(child, 3000)));
  };
  try {
    await waitForFormedCluster(urls, addresses, {
      timeoutMs: 60_000,
      intervalMs: 250,
      failure: () =>
        children.some((child) => child.exitCode !== null || child.signalCode !== null)
          ? 'a node process exited'
          : undefined,
    });
  } catch (error) {
    await stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)} (node logs in ${logDir})`);
  }
  return { urls, addresses, logDir, stop };
}
