// The lab of the network-namespace partition tests and its lifecycle in a test file: the namespaces are built
// once (beforeAll), each case's cluster is killed and every link healed after the case, and all of it is
// removed at the end, logs kept when a case failed. Also the cluster-level waits the cases share.
import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { requireBuild, waitForCluster, type NodeProc } from '../harness.js';
import { Lab, namespaceExists, removeStale, whyNoLab } from './lab.js';
import { NetnsCluster, type Slot } from './netns-cluster.js';

export const SHORT_DOWN_MS = 3000;

export interface PartitionLab {
  /** The lab, or a failure that says why this machine cannot run the case (never a skip). */
  requireLab(): Lab;
  /** Starts a cluster of `count` nodes in the lab; it is killed after the case. */
  startCluster(count: number, downAfterMs?: number): Promise<NetnsCluster>;
}

/** Registers the lab's lifecycle hooks in the calling test file. */
export function usePartitionLab(): PartitionLab {
  let lab: Lab | undefined;
  let labError: string | undefined;
  let cluster: NetnsCluster | undefined;
  let keepLogs = false;
  const logDirs: string[] = [];

  beforeAll(() => {
    requireBuild();
    labError = whyNoLab();
    if (labError !== undefined) return;
    const stale = removeStale();
    if (stale.length > 0) console.log(`removed stale namespaces/bridges of an earlier run: ${stale.join(', ')}`);
    try {
      lab = new Lab(5);
    } catch (error) {
      labError = `building the namespaces failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }, 60_000);

  afterEach(async (context) => {
    if (context.task.result?.state === 'fail') {
      keepLogs = true;
      if (cluster) console.log(cluster.describe());
    }
    await cluster?.killAll();
    if (cluster) logDirs.push(cluster.logDir);
    cluster = undefined;
    lab?.healAll();
  }, 30_000);

  // A run that dies between beforeAll and afterAll (an uncaught error, a worker exit) still removes the lab;
  // one killed outright leaves it to the next run's removeStale.
  process.once('exit', () => lab?.destroy());

  afterAll(async () => {
    await cluster?.killAll();
    const names = lab?.nodes.map((node) => node.ns) ?? [];
    lab?.destroy();
    for (const dir of logDirs) {
      if (keepLogs || process.env['E2E_KEEP_LOGS'] !== undefined) console.log(`netns e2e logs kept in ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    }
    const left = names.filter(namespaceExists);
    if (left.length > 0) throw new Error(`namespaces left behind: ${left.join(', ')}`);
  }, 60_000);

  function requireLab(): Lab {
    if (lab === undefined)
      throw new Error(`the network-namespace partition tests cannot run on this machine: ${labError ?? 'no lab'}`);
    return lab;
  }

  async function startCluster(count: number, downAfterMs?: number): Promise<NetnsCluster> {
    cluster = new NetnsCluster(requireLab(), count, downAfterMs !== undefined ? { downAfterMs } : {});
    await cluster.start();
    return cluster;
  }

  return { requireLab, startCluster };
}

export function proc(slot: Slot): NodeProc {
  return slot.generations[slot.generations.length - 1]!.proc;
}

/** Waits until every running node sees the same member list of exactly the running nodes, all up and reachable. */
export async function settle(c: NetnsCluster, timeoutMs: number): Promise<void> {
  await waitForCluster(c.running.map(proc), timeoutMs);
}

/**
 * Heals every link, starts the nodes that are out again on their addresses, and waits until the cluster settles
 * on one member list. Returns when it settled, or undefined (recorded as a soft failure saying `what`).
 */
export async function healAndSettle(
  net: Lab,
  c: NetnsCluster,
  out: readonly Slot[],
  timeoutMs: number,
  what: string,
): Promise<number | undefined> {
  net.healAll();
  await c.replace(out);
  try {
    await settle(c, timeoutMs);
    return Date.now();
  } catch (error) {
    expect.soft(String(error), what).toBe('settled');
    return undefined;
  }
}
