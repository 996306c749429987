// CLI node processes inside the lab's namespaces, one per namespace on its own address, with the management
// API bound on that address and reached from the root namespace through the bridge. Restarts keep the
// address, so "which process answered" is told apart by the generation of the NodeProc that was running.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, NodeProc, ROOT, waitForCluster } from '../harness.js';
import type { Lab, LabNode } from './lab.js';

const CLUSTER_PORT = 7701;
const HTTP_PORT = 8551;

export interface NetnsNodeOptions {
  readonly downAfterMs?: number;
}

/** One slot of the cluster: a namespace, and the node processes that ran in it, newest last. */
export interface Slot {
  readonly index: number;
  readonly name: string;
  readonly lab: LabNode;
  readonly address: string;
  readonly generations: Generation[];
}

export interface Generation {
  readonly proc: NodeProc;
  readonly startedAt: number;
  exitedAt?: number;
}

export class NetnsCluster {
  readonly logDir = mkdtempSync(join(tmpdir(), 'actor-ts-netns-'));
  readonly slots: Slot[];
  private sequence = 0;

  constructor(
    readonly lab: Lab,
    count: number,
    readonly options: NetnsNodeOptions = {},
  ) {
    if (count > lab.nodes.length)
      throw new Error(`the lab has ${lab.nodes.length} namespaces, ${count} nodes asked for`);
    this.slots = lab.nodes.slice(0, count).map((node, i) => ({
      index: i,
      name: `n${i + 1}`,
      lab: node,
      address: `app@${node.ip}:${CLUSTER_PORT}`,
      generations: [],
    }));
  }

  /** The newest process of each slot. */
  get procs(): NodeProc[] {
    return this.slots.map((slot) => current(slot).proc);
  }

  get running(): Slot[] {
    return this.slots.filter((slot) => slot.generations.length > 0 && !current(slot).proc.hasExited);
  }

  slotOf(address: string): Slot | undefined {
    return this.slots.find((slot) => slot.address === address);
  }

  /** Starts every node (the first forms the cluster, the others join it) and waits for one member list. */
  async start(timeoutMs = 45_000): Promise<void> {
    const seed = this.slots[0]!.address;
    for (const slot of this.slots) this.spawn(slot, [seed]);
    await waitForCluster(this.procs, timeoutMs);
  }

  /**
   * Replaces the process of each given slot (SIGKILL if it still runs, e.g. a node removed from the
   * cluster that did not stop) with a new one on the same address, seeded by the other running slots.
   */
  async replace(slots: readonly Slot[]): Promise<void> {
    for (const slot of slots) current(slot).proc.signal('SIGKILL');
    await Promise.all(slots.map((slot) => current(slot).proc.exited));
    const seeds = this.running.map((slot) => slot.address);
    for (const slot of slots) this.spawn(slot, seeds.length > 0 ? seeds : [this.slots[0]!.address]);
  }

  /** Generation key (address#n) of the process that ran `address` at `at`, for attributing an answer. */
  generationAt(address: string, at: number): string {
    const slot = this.slotOf(address);
    if (!slot) return `${address}#?`;
    for (let g = slot.generations.length - 1; g >= 0; g--) {
      if (slot.generations[g]!.startedAt <= at) return `${address}#${g + 1}`;
    }
    return `${address}#1`;
  }

  async killAll(): Promise<void> {
    const procs = this.slots.flatMap((slot) => slot.generations.map((g) => g.proc));
    for (const proc of procs) proc.signal('SIGKILL');
    await Promise.all(procs.map((proc) => proc.exited));
  }

  describe(): string {
    return this.slots
      .flatMap((slot) =>
        slot.generations.map(
          (g, i) => `----- ${slot.name}#${i + 1} (pid ${g.proc.pid}, ${g.proc.logFile})\n${g.proc.logTail(30)}`,
        ),
      )
      .join('\n');
  }

  removeLogs(): void {
    rmSync(this.logDir, { recursive: true, force: true });
  }

  private spawn(slot: Slot, seeds: readonly string[]): NodeProc {
    const generation = slot.generations.length + 1;
    const logFile = join(this.logDir, `${++this.sequence}-${slot.name}-${generation}.log`);
    const args = [
      'netns',
      'exec',
      slot.lab.ns,
      process.execPath,
      BIN,
      'node',
      '--system',
      'app',
      '--host',
      slot.lab.ip,
      // The lab's namespaces are a closed network: no secret, as before secure-by-default.
      '--insecure-cluster-port',
      '--port',
      String(CLUSTER_PORT),
      '--http-host',
      slot.lab.ip,
      '--http-port',
      String(HTTP_PORT),
      ...seeds.flatMap((seed) => ['--seed', seed]),
      // Debug: 'shard started' is a debug line, and it is how the majority's takeover is timed.
      '--log-level',
      'debug',
      ...(this.options.downAfterMs !== undefined ? ['--down-after-ms', String(this.options.downAfterMs)] : []),
    ];
    const fd = openSync(logFile, 'a');
    let proc: NodeProc;
    try {
      // `ip netns exec` execs the command in place, so the child pid is the node process itself.
      const child = spawn('ip', args, { cwd: ROOT, stdio: ['ignore', fd, fd] });
      proc = new NodeProc(
        `${slot.name}#${generation}`,
        child,
        logFile,
        slot.address,
        `http://${slot.lab.ip}:${HTTP_PORT}`,
        CLUSTER_PORT,
        HTTP_PORT,
      );
    } finally {
      closeSync(fd);
    }
    const entry: Generation = { proc, startedAt: Date.now() };
    void proc.exited.then(() => (entry.exitedAt = Date.now()));
    slot.generations.push(entry);
    return proc;
  }
}

function current(slot: Slot): Generation {
  const generation = slot.generations[slot.generations.length - 1];
  if (!generation) throw new Error(`${slot.name} was never started`);
  return generation;
}
