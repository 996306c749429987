// Entry point of `npm run bench` (add `-- --quick` for the few-minute version): runs scenarios 1-12 (S10-S12 on
// real node processes), prints a table per scenario, writes bench/results/<mode>.json and .svg, and on a full run
// refreshes the figures section of bench/README.md. `--only 1,4` runs a subset and writes nothing.
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { writeResults } from './lib/report.js';
import type { BenchOptions, Scenario, ScenarioResult } from './lib/scenario.js';
import { renderText } from './lib/table.js';
import { checkWireSize } from './lib/wire-size.js';
import { propagation } from './scenarios/s1-propagation.js';
import { concurrentOperators } from './scenarios/s2-concurrent.js';
import { partitionHeal } from './scenarios/s3-partition.js';
import { growth } from './scenarios/s4-growth.js';
import { allocationCost } from './scenarios/s5-allocation.js';
import { realNetwork } from './scenarios/s6-real-network.js';
import { durability } from './scenarios/s7-durability.js';
import { scale } from './scenarios/s8-scale.js';
import { ringVsLeastShard } from './scenarios/s9-ring.js';
import { delivery } from './scenarios/s10-delivery.js';
import { failover } from './scenarios/s11-failover.js';
import { scaleReal } from './scenarios/s12-scale-real.js';
import { coordinatorCost } from './scenarios/s13-coordinator.js';
import { tlsCost } from './scenarios/s14-tls.js';
import { passivation } from './scenarios/s15-passivation.js';
import { durableEntities } from './scenarios/s16-durable.js';

const SCENARIOS: ReadonlyArray<readonly [string, Scenario]> = [
  ['1', propagation],
  ['2', concurrentOperators],
  ['3', partitionHeal],
  ['4', growth],
  ['5', allocationCost],
  ['6', realNetwork],
  ['7', durability],
  ['8', scale],
  ['9', ringVsLeastShard],
  ['10', delivery],
  ['11', failover],
  ['12', scaleReal],
  ['13', coordinatorCost],
  ['14', tlsCost],
  ['15', passivation],
  ['16', durableEntities],
];

interface Flags {
  readonly quick: boolean;
  readonly only: ReadonlySet<string> | undefined;
  readonly seed: number;
  readonly delayMs: number;
  readonly nodes: readonly number[] | undefined;
  readonly noBudget: boolean;
  readonly killRuns: number | undefined;
}

function parseFlags(argv: readonly string[]): Flags {
  let quick = false;
  let only: Set<string> | undefined;
  let seed = 1;
  let delayMs = 1;
  let nodes: number[] | undefined;
  let noBudget = false;
  let killRuns: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = (argv[i] as string).split('=', 2) as [string, string | undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--quick':
        quick = true;
        break;
      case '--only':
        only = new Set(
          value()
            .split(',')
            .map((s) => s.trim().replace(/^s/i, '')),
        );
        break;
      case '--seed':
        seed = Number(value());
        break;
      case '--delay-ms':
        delayMs = Number(value());
        break;
      case '--nodes':
        nodes = value()
          .split(',')
          .map((s) => Number(s.trim()));
        break;
      case '--no-budget':
        noBudget = true;
        break;
      case '--kill-runs':
        killRuns = Number(value());
        break;
      case '--help':
        process.stdout.write(
          'usage: npm run bench [-- --quick] [--only 1,2,...] [--seed N] [--delay-ms MS] [--nodes 50,200] [--no-budget] [--kill-runs N]\n',
        );
        process.exit(0);
        break;
      default:
        throw new Error(`unknown flag ${flag} (try --help)`);
    }
  }
  if (!Number.isSafeInteger(seed) || seed <= 0) throw new Error('--seed must be a positive integer');
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new Error('--delay-ms must be a number >= 0');
  if (nodes !== undefined && (nodes.length === 0 || nodes.some((n) => !Number.isSafeInteger(n) || n < 5))) {
    throw new Error('--nodes must be a comma-separated list of integers >= 5 (three seeds and a cut pair)');
  }
  if (killRuns !== undefined && (!Number.isSafeInteger(killRuns) || killRuns < 1))
    throw new Error('--kill-runs must be a positive integer');
  return { quick, only, seed, delayMs, nodes, noBudget, killRuns };
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  checkWireSize();
  const options: BenchOptions = {
    quick: flags.quick,
    seed: flags.seed,
    delayMs: flags.delayMs,
    ...(flags.nodes === undefined ? {} : { nodes: flags.nodes }),
    noBudget: flags.noBudget,
    ...(flags.killRuns === undefined ? {} : { killRuns: flags.killRuns }),
  };
  const startedAt = new Date();
  const started = process.hrtime.bigint();
  const results: ScenarioResult[] = [];
  for (const [id, scenario] of SCENARIOS) {
    if (flags.only && !flags.only.has(id)) continue;
    const t0 = process.hrtime.bigint();
    process.stdout.write(`-- scenario ${id}${flags.quick ? ' (quick)' : ''}...\n`);
    const result = { ...(await scenario(options)), seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
    results.push(result);
    for (const table of result.tables) process.stdout.write(renderText(table) + '\n\n');
    process.stdout.write(`(scenario ${id}: ${result.seconds.toFixed(1)} s)\n\n`);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  process.stdout.write(
    '== Headlines\n' + results.flatMap((r) => r.headlines).join('\n') + `\n\ntotal ${seconds.toFixed(1)} s\n`,
  );
  if (flags.only) {
    process.stdout.write('(--only: nothing written)\n');
    return;
  }
  const extra = [
    flags.seed !== 1 ? `--seed ${flags.seed}` : '',
    flags.delayMs !== 1 ? `--delay-ms ${flags.delayMs}` : '',
    flags.nodes !== undefined ? `--nodes ${flags.nodes.join(',')}` : '',
    flags.noBudget ? '--no-budget' : '',
    flags.killRuns !== undefined ? `--kill-runs ${flags.killRuns}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  const command = `npm run bench${flags.quick || extra ? ` -- ${[flags.quick ? '--quick' : '', extra].filter(Boolean).join(' ')}` : ''}`;
  const cpu = cpus();
  const written = writeResults(
    fileURLToPath(new URL('../../bench/', import.meta.url)),
    {
      command,
      mode: flags.quick ? 'quick' : 'full',
      startedAt: startedAt.toISOString(),
      seconds,
      machine: `${cpu.length} x ${cpu[0]?.model.trim() ?? 'unknown cpu'}`,
      node: process.versions.node,
      seed: flags.seed,
      delayMs: flags.delayMs,
    },
    results,
    !flags.quick &&
      flags.seed === 1 &&
      flags.delayMs === 1 &&
      flags.nodes === undefined &&
      !flags.noBudget &&
      flags.killRuns === undefined,
  );
  process.stdout.write(`wrote ${written.join(', ')}\n`);
}

await main();
