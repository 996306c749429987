// A private network for partition tests: one Linux network namespace per node, each with a veth into a bridge
// in the root namespace, on a /24 of 10.213.0.0/16 that no other interface uses. Links are cut with an nft set
// in the receiving namespace (packets silently dropped at input, as on a real broken network; a drop at output
// would fail the sender's syscalls at once instead). Names carry the creating process's pid, so a later run
// can find and remove what a crashed run left behind.
import { execFileSync, spawnSync } from 'node:child_process';

const PREFIX = 'atp';
const NFT_TABLE = 'atp_partition';

export interface LabNode {
  /** Namespace name. */
  readonly ns: string;
  /** The node's IPv4 address inside its namespace. */
  readonly ip: string;
}

function run(command: string, args: readonly string[], input?: string): string {
  const result = spawnSync(command, args, { encoding: 'utf8', input, timeout: 15_000 });
  if (result.error) throw new Error(`${command} ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr.trim()}`);
  return result.stdout;
}

/** Runs and ignores failure: for cleanup of things that may already be gone. */
function tryRun(command: string, args: readonly string[]): void {
  spawnSync(command, args, { encoding: 'utf8', timeout: 15_000 });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).status === 0;
}

/**
 * Why this machine cannot run the partition tests, or undefined when it can. Checked for real (a namespace
 * and an nft table are created and removed), so the message names the step that failed.
 */
export function whyNoLab(): string | undefined {
  if (process.platform !== 'linux') return `network namespaces need Linux; this is ${process.platform}`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return `creating network namespaces needs root; running as uid ${process.getuid()}`;
  }
  for (const tool of ['ip', 'nft']) {
    if (!hasCommand(tool)) {
      return `the '${tool}' command is missing (Debian: apt-get install -y ${tool === 'ip' ? 'iproute2' : 'nftables'}; npm test installs it as root)`;
    }
  }
  const probe = `${PREFIX}${process.pid}-probe`;
  try {
    run('ip', ['netns', 'add', probe]);
    run(
      'ip',
      ['netns', 'exec', probe, 'nft', '-f', '-'],
      `table inet ${NFT_TABLE} {\n chain input {\n  type filter hook input priority -10;\n }\n}\n`,
    );
    return undefined;
  } catch (error) {
    return `cannot create a network namespace with an nft table: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    tryRun('ip', ['netns', 'del', probe]);
  }
}

/**
 * Removes namespaces and bridges of earlier runs whose process is gone, killing what still runs inside those
 * namespaces (node processes an earlier, crashed run started).
 */
export function removeStale(): string[] {
  const removed: string[] = [];
  const owner = new RegExp(`^${PREFIX}(\\d+)`);
  for (const line of run('ip', ['netns', 'list']).split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const match = owner.exec(name);
    if (!match || pidAlive(Number(match[1]))) continue;
    killInside(name);
    tryRun('ip', ['netns', 'del', name]);
    removed.push(name);
  }
  for (const line of run('ip', ['-o', 'link', 'show', 'type', 'bridge']).split('\n')) {
    const name = /^\d+: ([^:@]+)/.exec(line)?.[1] ?? '';
    const match = owner.exec(name);
    if (!match || pidAlive(Number(match[1]))) continue;
    tryRun('ip', ['link', 'del', name]);
    removed.push(name);
  }
  return removed;
}

function killInside(ns: string): void {
  let pids: number[] = [];
  try {
    pids = run('ip', ['netns', 'pids', ns])
      .split('\n')
      .filter((s) => /^\d+$/.test(s))
      .map(Number);
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** A /24 third octet no interface of the root namespace uses yet. */
function freeSubnet(): number {
  const used = run('ip', ['-4', '-o', 'addr', 'show']);
  const start = process.pid % 200;
  for (let i = 0; i < 250; i++) {
    const octet = 1 + ((start + i) % 250);
    if (!used.includes(`10.213.${octet}.`)) return octet;
  }
  throw new Error('no free /24 in 10.213.0.0/16');
}

export class Lab {
  readonly nodes: LabNode[] = [];
  readonly bridge: string;
  readonly bridgeIp: string;
  private readonly subnet: number;
  private readonly cuts = new Set<string>();
  private destroyed = false;

  /** Builds `count` namespaces on a fresh bridge; on any failure, removes what it had created and throws. */
  constructor(count: number) {
    const tag = `${PREFIX}${process.pid}`;
    this.bridge = `${tag}b`;
    this.subnet = freeSubnet();
    this.bridgeIp = `10.213.${this.subnet}.254`;
    try {
      run('ip', ['link', 'add', this.bridge, 'type', 'bridge']);
      run('ip', ['addr', 'add', `${this.bridgeIp}/24`, 'dev', this.bridge]);
      run('ip', ['link', 'set', this.bridge, 'up']);
      for (let i = 1; i <= count; i++) {
        const ns = `${tag}-n${i}`;
        const ip = `10.213.${this.subnet}.${i}`;
        const host = `${tag}h${i}`;
        run('ip', ['netns', 'add', ns]);
        this.nodes.push({ ns, ip });
        run('ip', ['link', 'add', host, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
        run('ip', ['link', 'set', host, 'master', this.bridge]);
        run('ip', ['link', 'set', host, 'up']);
        run('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
        run('ip', ['netns', 'exec', ns, 'ip', 'addr', 'add', `${ip}/24`, 'dev', 'eth0']);
        run('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'eth0', 'up']);
        run(
          'ip',
          ['netns', 'exec', ns, 'nft', '-f', '-'],
          `table inet ${NFT_TABLE} {\n set cut {\n  type ipv4_addr\n }\n chain input {\n  type filter hook input priority -10;\n  ip saddr @cut drop\n }\n}\n`,
        );
      }
    } catch (error) {
      this.destroy();
      throw error;
    }
  }

  /** Drops packets from `from` arriving at `to` (one direction of one link). */
  cutOneWay(from: LabNode, to: LabNode): void {
    const key = `${from.ip}>${to.ip}`;
    if (this.cuts.has(key)) return;
    run('ip', ['netns', 'exec', to.ns, 'nft', 'add', 'element', 'inet', NFT_TABLE, 'cut', `{ ${from.ip} }`]);
    this.cuts.add(key);
  }

  restoreOneWay(from: LabNode, to: LabNode): void {
    const key = `${from.ip}>${to.ip}`;
    if (!this.cuts.has(key)) return;
    run('ip', ['netns', 'exec', to.ns, 'nft', 'delete', 'element', 'inet', NFT_TABLE, 'cut', `{ ${from.ip} }`]);
    this.cuts.delete(key);
  }

  cut(a: LabNode, b: LabNode): void {
    this.cutOneWay(a, b);
    this.cutOneWay(b, a);
  }

  restore(a: LabNode, b: LabNode): void {
    this.restoreOneWay(a, b);
    this.restoreOneWay(b, a);
  }

  /**
   * Cuts every link between the two sides, both directions: one nft command per namespace (all the
   * sources it drops at once), so the cut is in place everywhere within a few process spawns.
   */
  partition(sideA: readonly LabNode[], sideB: readonly LabNode[]): void {
    for (const [to, from] of [...sideA.map((a) => [a, sideB] as const), ...sideB.map((b) => [b, sideA] as const)]) {
      const sources = from.filter((f) => !this.cuts.has(`${f.ip}>${to.ip}`));
      if (sources.length === 0) continue;
      run('ip', [
        'netns',
        'exec',
        to.ns,
        'nft',
        'add',
        'element',
        'inet',
        NFT_TABLE,
        'cut',
        `{ ${sources.map((f) => f.ip).join(', ')} }`,
      ]);
      for (const f of sources) this.cuts.add(`${f.ip}>${to.ip}`);
    }
  }

  /** Restores every cut link. */
  healAll(): void {
    for (const node of this.nodes)
      run('ip', ['netns', 'exec', node.ns, 'nft', 'flush', 'set', 'inet', NFT_TABLE, 'cut']);
    this.cuts.clear();
  }

  /** Links currently cut, as "from>to" IP pairs. */
  get activeCuts(): string[] {
    return [...this.cuts];
  }

  /** Kills anything still running in the namespaces, then removes namespaces (their veths go with them) and bridge. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const node of this.nodes) {
      killInside(node.ns);
      tryRun('ip', ['netns', 'del', node.ns]);
    }
    tryRun('ip', ['link', 'del', this.bridge]);
  }
}

/** True when a namespace of this name exists (for the cleanup check). */
export function namespaceExists(name: string): boolean {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .some((line) => line.split(' ')[0] === name);
}
