// `cordon ADDR`, `uncordon ADDR`, `drain ADDR [--wait]` and `audit`: taking a node out of allocation,
// emptying it, and reading what a node accepted. `drain --wait` polls until the node hosts no shard of any
// type it was drained of, printing one line per shard as it lands elsewhere, and the time it took.
import type { Command } from 'commander';
import type { DrainAnswer } from '../management/api-shapes.js';
import type { ManagementClient } from './client.js';
import { table } from './format.js';
import { addressArg, connect, hlcText, usage, type CliIo } from './operator-support.js';
import { provenanceOf, withProvenance, type ProvenanceOptions } from './provenance.js';

/** How long `drain --wait` waits for the node to empty before giving up (exit code 1). */
export const DRAIN_WAIT_MS = 120_000;
const POLL_MS = 250;

export function addCordonCommands(program: Command, io: CliIo): void {
  withProvenance(program.command('cordon <address>'))
    .description('allocate nothing new to this node and move nothing to it; it keeps serving what it hosts')
    .action(async (address: string, options: ProvenanceOptions, command: Command) => {
      const { client } = connect(command);
      const target = usage(command, () => addressArg(address));
      const written = await client.cordon(
        target,
        usage(command, () => provenanceOf(options)),
      );
      io.out(`${written.address} cordoned (hlc ${hlcText(written.hlc)})`);
    });

  withProvenance(program.command('uncordon <address>'))
    .description('let the coordinator allocate to this node again')
    .action(async (address: string, options: ProvenanceOptions, command: Command) => {
      const { client } = connect(command);
      const target = usage(command, () => addressArg(address));
      await client.uncordon(
        target,
        usage(command, () => provenanceOf(options)),
      );
      io.out(`${target} uncordoned`);
    });

  withProvenance(program.command('drain <address>'))
    .description('cordon the node, then hand off every shard it hosts to the other nodes')
    .option('--wait', 'wait until the node hosts no shard, printing each shard as it moves', false)
    .action(async (address: string, options: ProvenanceOptions & { wait: boolean }, command: Command) => {
      const { client } = connect(command);
      const target = usage(command, () => addressArg(address));
      const started = Date.now();
      const outcome = await client.drain(
        target,
        usage(command, () => provenanceOf(options)),
      );
      printDrain(outcome, io);
      if (!options.wait) return;
      const drained = await waitDrained(client, outcome, io, DRAIN_WAIT_MS);
      if (!drained) {
        process.exitCode = 1;
        return;
      }
      io.out(`${target} drained in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    });

  program
    .command('audit')
    .description('the writes this node accepted (its last 1,000), newest first')
    .action(async (_options: unknown, command: Command) => {
      const { client } = connect(command);
      const { entries } = await client.audit();
      if (entries.length === 0) return io.out('no writes accepted by this node yet');
      io.out(
        table(
          ['at', 'action', 'type', 'shards', 'target', 'by', 'reason'],
          entries.map((e) => [
            e.at,
            e.action,
            e.typeName ?? '-',
            e.shardIds.length === 0 ? '-' : e.shardIds.join(','),
            e.target ?? '-',
            e.by ?? '-',
            e.reason ?? '-',
          ]),
        ),
      );
    });
}

function printDrain(outcome: DrainAnswer, io: CliIo): void {
  io.out(`${outcome.address} cordoned; handing off:`);
  const rows = Object.entries(outcome.moves).flatMap(([typeName, moves]) =>
    moves.map((move) => [typeName, String(move.shardId), move.from, move.to ?? '(waits: no home)']),
  );
  if (rows.length === 0) io.out('  nothing: it hosts no shard');
  else io.out(table(['type', 'shard', 'from', 'to'], rows));
  for (const warning of outcome.warnings) io.err(`warning: ${warning}`);
}

/**
 * Polls every drained type until the node hosts none of its shards; one line per shard once it runs
 * elsewhere (or left with no home). False, with what is left on stderr, when `timeoutMs` passed first.
 */
async function waitDrained(
  client: ManagementClient,
  outcome: DrainAnswer,
  io: CliIo,
  timeoutMs: number,
): Promise<boolean> {
  const pending = new Map(
    Object.entries(outcome.moves).map(([typeName, moves]) => [typeName, new Set(moves.map((m) => m.shardId))]),
  );
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let hosted = 0;
    for (const [typeName, shards] of pending) {
      const { regions, handingOff } = await client.shards(typeName);
      const moving = new Set(handingOff);
      const homes = new Map(
        regions.flatMap((region) => region.shards.map((shardId) => [shardId, region.address] as const)),
      );
      hosted += regions.find((region) => region.address === outcome.address)?.shards.length ?? 0;
      for (const shardId of shards) {
        const home = homes.get(shardId);
        if (moving.has(shardId) || home === outcome.address) continue;
        shards.delete(shardId);
        io.out(
          home === undefined
            ? `  ${typeName} shard ${shardId}: left, no home yet (allocated on its next message)`
            : `  ${typeName} shard ${shardId} -> ${home}`,
        );
      }
    }
    const left = [...pending.values()].reduce((sum, shards) => sum + shards.size, 0);
    if (left === 0 && hosted === 0) return true;
    if (Date.now() >= deadline) {
      io.err(`${outcome.address} still hosts ${hosted} shard(s) after ${timeoutMs / 1000} s`);
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
