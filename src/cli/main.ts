// The `actor-ts-placement` command line: start a node, start a local multi-process cluster, and operate a
// running cluster through any node's management API (placements, rebalance, shards, members).
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { Command, Option } from 'commander';
import { DEFAULT_NODE_CONFIG as D } from '../node/config.js';
import { COUNTER_TYPE } from '../node/counter.js';
import { ApiError } from './client.js';
import { shardRanges, table } from './format.js';
import { addExplainCommand, printDryRun } from './insight-commands.js';
import { addCordonCommands } from './cordon-commands.js';
import { addPlacementsCommands } from './placements-command.js';
import { provenanceOf, withProvenance, type ProvenanceOptions } from './provenance.js';
import { connect, rebalanceAndWait, shardIdArg, usage, type CliIo } from './operator-support.js';
import { addLocalClusterCommand } from './local-cluster-command.js';
import { addShardOfCommand } from './shard-of-command.js';
import { addNodeCommand, type NodeCommandRunner } from './node-command.js';

export type { CliIo } from './operator-support.js';
export { clusterFlags, type NodeCliOptions, type NodeCommandRunner } from './node-command.js';

const defaultIo: CliIo = {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
};

const BIN_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'actor-ts-placement.js');

export interface ProgramOptions {
  /** Default: start the node in this process and run it until SIGTERM/SIGINT (or the local-cluster parent goes). */
  readonly runNode?: NodeCommandRunner;
}

export function buildProgram(io: CliIo = defaultIo, programOptions: ProgramOptions = {}): Command {
  const program = new Command('actor-ts-placement')
    .description('Replicated shard placement for actor-ts clusters: run nodes, pin shards, move them.')
    .showHelpAfterError()
    .configureOutput({ writeOut: (text) => io.out(text.trimEnd()), writeErr: (text) => io.err(text.trimEnd()) })
    // Set before the subcommands are added, which copy it: a usage error in any of them must throw back to
    // main() (exit code 2), not call process.exit from inside a caller's process.
    .exitOverride();

  addNodeCommand(program, programOptions.runNode);
  addShardOfCommand(program, io);

  addLocalClusterCommand(program, io, BIN_PATH);

  addPlacementsCommands(program, io);

  addRebalanceCommand(program, io);
  addExplainCommand(program, io);
  addCordonCommands(program, io);

  addViewCommands(program, io);

  for (const command of program.commands) {
    if (command.name() !== 'node' && command.name() !== 'local-cluster') addOperatorOptions(command);
  }
  return program;
}

/** `rebalance <shardIds...>`: hands the shards off now (or prints the moves, with --dry-run). */
function addRebalanceCommand(program: Command, io: CliIo): void {
  withProvenance(program.command('rebalance <shardIds...>'))
    .description('hand these shards off now; they are re-allocated through the strategy (pins decide)')
    .option('--dry-run', 'print the moves it would start, and where each shard would land; hand nothing off', false)
    .action(async (shardIds: string[], options: ProvenanceOptions & { dryRun: boolean }, command: Command) => {
      const { client, type } = connect(command);
      const ids = usage(command, () => shardIds.map(shardIdArg));
      if (options.dryRun) return printDryRun(io, await client.dryRunRebalance(type, ids));
      await rebalanceAndWait(
        client,
        type,
        ids,
        io,
        usage(command, () => provenanceOf(options)),
      );
    });
}

/** `shards` and `members`: what a node sees of the cluster, as tables. */
function addViewCommands(program: Command, io: CliIo): void {
  program
    .command('shards')
    .description('where the shards of a type live (pinned shards marked *)')
    .action(async (_options: unknown, command: Command) => {
      const { client, type } = connect(command);
      const [locations, pins] = await Promise.all([client.shards(type), client.placements(type)]);
      const pinned = new Set(pins.placements.map((p) => p.shardId));
      io.out(
        table(
          ['node', 'count', 'shards'],
          locations.regions.map((region) => [
            region.address,
            String(region.shards.length),
            shardRanges(region.shards, pinned),
          ]),
        ),
      );
      if (pinned.size > 0) io.out('* pinned by an explicit placement');
    });

  program
    .command('members')
    .description('cluster members as the node sees them')
    .action(async (_options: unknown, command: Command) => {
      const { client } = connect(command);
      const { self, members } = await client.members();
      io.out(
        table(
          ['address', 'status', 'reachable', 'upNumber', 'appVersion', 'release', 'protocol', 'attributes', 'cordoned'],
          members.map((m) => [
            m.address + (m.address === self ? ' (this)' : ''),
            m.status,
            m.reachable ? 'yes' : 'NO',
            String(m.upNumber),
            m.appVersion,
            m.release ?? '-',
            m.protocol === undefined || m.protocol === null ? '-' : String(m.protocol),
            attributesText(m.attributes),
            m.cordoned === true ? 'CORDONED' : m.cordoned === false ? 'no' : '-',
          ]),
        ),
      );
    });
}

/** `--fallback`: a name outside FALLBACK_STRATEGIES is a usage error (exit 2) before anything starts. */
function addOperatorOptions(command: Command): void {
  const targets = command.commands.length > 0 ? command.commands : [command];
  for (const target of targets) {
    target
      .addOption(
        new Option('--url <url>', "any node's management API")
          .env('ACTOR_TS_URL')
          .default(`http://${D.http.host}:${D.http.port}`),
      )
      .addOption(new Option('--type <typeName>', 'entity type').default(COUNTER_TYPE))
      .addOption(new Option('--token <token>', 'bearer token').env('ACTOR_TS_AUTH_TOKEN'))
      .addOption(
        new Option('--ca <file>', "PEM certificates an https:// node's certificate must chain to").env('ACTOR_TS_CA'),
      );
  }
}

function attributesText(attributes: Readonly<Record<string, string>> | undefined): string {
  const entries = Object.entries(attributes ?? {});
  return entries.length === 0 ? '-' : entries.map(([key, value]) => `${key}=${value}`).join(',');
}

/** What to do about an error the API answered, where the API's message cannot know it (how the CLI is given a token). */
function apiErrorHint(error: ApiError): string {
  if (error.status === 401)
    return ' (give the token with --token <token> or the ACTOR_TS_AUTH_TOKEN environment variable)';
  if (error.code === 'unreachable')
    return ' (is a node running there? `npm start` starts a local cluster; --url or ACTOR_TS_URL names another node)';
  return '';
}

/** Runs the CLI; resolves with the process exit code. */
export async function main(
  argv: readonly string[],
  io: CliIo = defaultIo,
  programOptions: ProgramOptions = {},
): Promise<number> {
  const program = buildProgram(io, programOptions).exitOverride();
  try {
    await program.parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof ApiError) {
      io.err(`error: ${error.code}: ${error.message}${apiErrorHint(error)}`);
      return 1;
    }
    const code = (error as { code?: string }).code;
    if (typeof code === 'string' && code.startsWith('commander.')) {
      return code === 'commander.helpDisplayed' || code === 'commander.version' ? 0 : 2;
    }
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
