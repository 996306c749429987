// S10's hand-off and its floor alone, by hand (issue 40): `npm run build && node dist/bench/hand-off-floor.js
// [rounds] [trials] [processes]`. Two node processes as in S10 (or three: the shard then moves between the two that
// do not run the coordinator, whose relay was a second crossing before protocol 10); each round moves the shard of
// 1,000 entities `trials` times with 1 KiB of state each and without, and sends the same bytes as raw TCP; one JSON
// line per round (medians, ms; and the CPU and minor page faults of the node processes per hand-off, from /proc: CPU
// is moved less than wall-clock time by other work on the machine). The first rounds warm the code paths up. To
// compare two builds, run each build's copy in turn, several times: the machine's load moves every figure, so only
// builds alternated in the same minutes compare.
import { readFileSync } from 'node:fs';
import { startDeliveryNodes, type DeliveryNode } from './lib/delivery-cluster.js';
import { STATE_BYTES } from './lib/delivery-node.js';
import { STATE_ENTRY_OVERHEAD, handOff } from './scenarios/s10-delivery.js';
import { summarize } from './lib/stats.js';

const rounds = Number(process.argv[2] ?? 6);
const trials = Number(process.argv[3] ?? 16);
const processes = Number(process.argv[4] ?? 2);
const ENTITIES = 1_000;
/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * What the node processes used so far, from /proc (Linux): CPU ms (user + system), and minor page faults (a page
 * of memory touched for the first time since the allocator got it from the kernel: on a virtual machine each one
 * traps to the hypervisor, about 12-14 us here, so a hand-off's fresh buffers cost more than copying into them).
 */
function usage(nodes: readonly DeliveryNode[]): { cpuMs: number; faults: number } {
  let ticks = 0;
  let faults = 0;
  for (const node of nodes) {
    const stat = readFileSync(`/proc/${node.child.pid}/stat`, 'utf8');
    // Fields after the command's closing parenthesis, from the state (field 3): minflt is field 10.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    faults += Number(fields[7]);
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return { cpuMs: (ticks * 1000) / TICKS_PER_SECOND, faults };
}

/**
 * The hand-offs' median ms, the medians by direction (`toA`: onto the first node from the second; `toB` the
 * other way; each line names the coordinator's node), and the CPU ms and page faults of the processes per hand-off.
 */
async function measured(
  nodes: readonly [DeliveryNode, DeliveryNode],
  type: string,
  trials: number,
  everyone: readonly DeliveryNode[],
): Promise<{ ms: number; toA: number; toB: number; cpuMs: number; faults: number }> {
  const before = usage(everyone);
  const durations = await handOff(nodes, type, ENTITIES, trials, everyone);
  const ms = summarize(durations).median;
  // handOff moves the shard onto a in even trials, onto b in odd ones.
  const toA = summarize(durations.filter((_, trial) => trial % 2 === 0)).median;
  const toB = summarize(durations.filter((_, trial) => trial % 2 === 1)).median;
  const after = usage(everyone);
  return {
    ms,
    toA,
    toB,
    cpuMs: (after.cpuMs - before.cpuMs) / trials,
    faults: (after.faults - before.faults) / trials,
  };
}

async function main(): Promise<void> {
  const nodes = await startDeliveryNodes(processes);
  try {
    const [first, second] = nodes as [DeliveryNode, DeliveryNode];
    const homes = { Remote: second.address, Local: first.address, Stateful: second.address, Plain: second.address };
    await Promise.all(nodes.map((n) => n.call('setHomes', homes)));
    await first.call('windowedSend', 'Remote', 500, 50, 8);
    // The node whose coordinator answers (only the coordinator's node counts registered regions).
    const regions = await Promise.all(nodes.map((n) => n.call('regions')));
    const at = regions.indexOf(nodes.length);
    const coordinator = 'abc'[at] ?? '?';
    // Two processes: between both, the coordinator on one of them; three: between the two without it.
    const movers = processes === 2 ? nodes : nodes.filter((_, i) => i !== at);
    const [a, b] = movers as [DeliveryNode, DeliveryNode];
    const sink = await b.call('sink');
    for (let round = 0; round < rounds; round++) {
      const withState = await measured([a, b], 'Stateful', trials, nodes);
      const without = await measured([a, b], 'Plain', trials, nodes);
      const bytes = ENTITIES * (STATE_BYTES + STATE_ENTRY_OVERHEAD);
      const raw = summarize(await a.call('rawTransfer', sink, bytes, trials * 2)).median;
      const floor = without.ms + raw;
      const line = {
        round,
        withState: withState.ms,
        without: without.ms,
        raw,
        floor,
        ratio: withState.ms / floor,
        coordinator,
        withStateToA: withState.toA,
        withStateToB: withState.toB,
        cpuWithState: withState.cpuMs,
        cpuWithout: without.cpuMs,
        faultsWithState: withState.faults,
        faultsWithout: without.faults,
      };
      process.stdout.write(
        `${JSON.stringify(line, (_key, v: unknown) => (typeof v === 'number' ? +v.toFixed(3) : v))}\n`,
      );
    }
  } finally {
    for (const node of nodes) node.kill();
  }
}

await main();
