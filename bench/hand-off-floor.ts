// S10's hand-off and its floor alone, by hand (issue 40): `npm run build && node dist/bench/hand-off-floor.js
// [rounds] [trials] [processes]`. Two node processes as in S10 (or three: the shard then moves between the two that
// do not run the coordinator, whose relay was a second crossing before protocol 10); each round moves the shard of
// 1,000 entities `trials` times
// with 1 KiB of state each and without, and sends the same bytes as raw TCP; one JSON line per round (medians,
// ms; and the CPU both processes spent per hand-off, from /proc, which other work on the machine moves less than
// wall-clock time). The first round warms the code paths up. To compare two builds, run each build's copy in
// turn, several times: the machine's load moves every figure, so only builds alternated in the same minutes
// compare.
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

/** CPU ms (user + system) the node processes used so far, from /proc (Linux). */
function cpuMs(nodes: readonly DeliveryNode[]): number {
  let ticks = 0;
  for (const node of nodes) {
    const stat = readFileSync(`/proc/${node.child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/**
 * The hand-offs' median ms, the medians by direction (`toA`: onto the first node from the second; `toB` the
 * other way; each line names the coordinator's node), and the CPU ms both processes spent per hand-off.
 */
async function measured(
  nodes: readonly [DeliveryNode, DeliveryNode],
  type: string,
  trials: number,
  everyone: readonly DeliveryNode[],
): Promise<{ ms: number; toA: number; toB: number; cpuMs: number }> {
  const before = cpuMs(everyone);
  const durations = await handOff(nodes, type, ENTITIES, trials, everyone);
  const ms = summarize(durations).median;
  // handOff moves the shard onto a in even trials, onto b in odd ones.
  const toA = summarize(durations.filter((_, trial) => trial % 2 === 0)).median;
  const toB = summarize(durations.filter((_, trial) => trial % 2 === 1)).median;
  return { ms, toA, toB, cpuMs: (cpuMs(everyone) - before) / trials };
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
    for (let round = 0; round < rounds; round++) {
      const withState = await measured([a, b], 'Stateful', trials, nodes);
      const without = await measured([a, b], 'Plain', trials, nodes);
      const bytes = ENTITIES * (STATE_BYTES + STATE_ENTRY_OVERHEAD);
      const raw = summarize(await a.call('rawTransfer', await b.call('sink'), bytes, trials * 2)).median;
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
