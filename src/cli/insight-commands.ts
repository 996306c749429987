// `explain SHARD` (why a shard is where it is, in the coordinator's words) and the table a `--dry-run` of
// `placements set` or `rebalance` prints: the moves the coordinator would start, and its warnings.
import type { Command } from 'commander';
import type { ExplainAnswer, PlacementsDryRunAnswer, RebalanceDryRun } from '../management/api-shapes.js';
import { table } from './format.js';
import { connect, shardIdArg, usage, type CliIo } from './operator-support.js';

export function addExplainCommand(program: Command, io: CliIo): void {
  program
    .command('explain <shardId>')
    .description('why a shard is where it is: its home, its pin, the decision and every node it could go to')
    .action(async (shardId: string, _options: unknown, command: Command) => {
      const { client, type } = connect(command);
      const answer = await client.explain(
        type,
        usage(command, () => shardIdArg(shardId)),
      );
      for (const line of explanationText(answer)) io.out(line);
    });
}

export function explanationText(answer: ExplainAnswer): string[] {
  const where = answer.home === null ? 'no home' : `on ${answer.home}`;
  const lines = [
    `shard ${answer.shardId}: ${where} (${answer.decision}${answer.handingOff ? ', handing off' : ''})`,
    answer.message,
  ];
  const pin = answer.placement;
  if (pin !== null) {
    const rule = [pin.mode, pin.expiresAt === null ? 'never expires' : `expires ${pin.expiresAt}`];
    if (pin.reason !== null) rule.push(`reason ${JSON.stringify(pin.reason)}`);
    if (pin.by !== null) rule.push(`by ${pin.by}`);
    lines.push(`pin: ${pin.target} (${rule.join(', ')})`);
  }
  lines.push('');
  lines.push(
    table(
      ['node', 'shards', 'reachable', 'status', 'cordoned', 'matches pin'],
      answer.nodes.map((n) => [
        n.address + (n.address === answer.home ? ' (home)' : ''),
        String(n.shards),
        n.reachable ? 'yes' : 'NO',
        n.status,
        n.cordoned ? 'CORDONED' : 'no',
        n.matches === null ? '-' : n.matches ? 'yes' : 'no',
      ]),
    ),
  );
  if (answer.activeEntities !== undefined) {
    const { node, count } = answer.activeEntities;
    lines.push('', `entities of the type active on ${node}: ${count}`);
  }
  const history = answer.history ?? [];
  if (history.length > 0) {
    lines.push('', 'history:');
    for (const { atMs, what } of history) lines.push(`  ${new Date(atMs).toISOString()}  ${what}`);
  }
  return lines;
}

/** Prints a dry run's pins (when it has any) and moves as a table, and its warnings on stderr. */
export function printDryRun(
  io: CliIo,
  result: RebalanceDryRun & { readonly placements?: PlacementsDryRunAnswer['placements'] },
): void {
  io.out('dry run: nothing was written and nothing moved');
  for (const pin of result.placements ?? []) io.out(`would pin shard ${pin.shardId} -> ${pin.target} (${pin.mode})`);
  if (result.moves.length === 0) {
    io.out(
      (result.placements ?? []).length > 0
        ? 'no shard would move: each pinned shard already runs where its pin says, or is not allocated yet ' +
            '(its first message starts it where the pin says)'
        : 'no shard would move',
    );
  } else {
    io.out(
      table(
        ['shard', 'from', 'to'],
        result.moves.map((move) => [String(move.shardId), move.from, move.to ?? '(none: waits without a home)']),
      ),
    );
  }
  for (const warning of result.warnings) io.err(`warning: ${warning.message}`);
}
