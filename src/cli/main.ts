// The `actor-ts-placement` command line: start a node, start a local multi-process cluster, and operate a
// running cluster through any node's management API (placements, rebalance, shards, members).
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { MAX_ATTRIBUTES, parseAttributeAssignment } from '../cluster/attributes.js';
import { DEFAULT_CLUSTER_CONFIG, resolveClusterConfig } from '../cluster/config.js';
import { ActorTsError } from '../errors.js';
import { clusterPortProblem, DEFAULT_NODE_CONFIG as D, type NodeConfig } from '../node/config.js';
import { runNode } from '../node/run.js';
import type { FallbackStrategyName } from '../sharding/strategies/fallback-choice.js';
import { COUNTER_SHARDS, COUNTER_TYPE } from '../node/counter.js';
import {
  DEFAULT_SHARD_ID_FUNCTION,
  SHARD_ID_FUNCTIONS,
  shardIdFor,
  type ShardIdFunction,
} from '../sharding/shard-id.js';
import { ApiError } from './client.js';
import { shardRanges, table } from './format.js';
import { addExplainCommand, printDryRun } from './insight-commands.js';
import { addCordonCommands } from './cordon-commands.js';
import { addPlacementsCommands } from './placements-command.js';
import { provenanceOf, withProvenance, type ProvenanceOptions } from './provenance.js';
import {
  addressArg,
  connect,
  fallbackOption,
  port,
  positiveInt,
  rebalanceAndWait,
  shardIdArg,
  usage,
  type CliIo,
} from './operator-support.js';
import { addLocalClusterCommand } from './local-cluster-command.js';

export type { CliIo } from './operator-support.js';

const defaultIo: CliIo = {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
};

const BIN_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'actor-ts-placement.js');

/** Runs the `node` command's node until it stops and resolves with the exit code; tests replace it. */
export type NodeCommandRunner = (input: Partial<NodeConfig>) => Promise<number>;

export interface ProgramOptions {
  /** Default: start the node in this process and run it until SIGTERM/SIGINT (or the local-cluster parent goes). */
  readonly runNode?: NodeCommandRunner;
}

export function buildProgram(io: CliIo = defaultIo, programOptions: ProgramOptions = {}): Command {
  const runNodeCommand = programOptions.runNode ?? runNodeProcess;
  const program = new Command('actor-ts-placement')
    .description('Replicated shard placement for actor-ts clusters: run nodes, pin shards, move them.')
    .showHelpAfterError()
    .configureOutput({ writeOut: (text) => io.out(text.trimEnd()), writeErr: (text) => io.err(text.trimEnd()) })
    // Set before the subcommands are added, which copy it: a usage error in any of them must throw back to
    // main() (exit code 2), not call process.exit from inside a caller's process.
    .exitOverride();

  program
    .command('node')
    .description('start one cluster node (with the demo entity type Counter and the management API)')
    // No defaults here: an unset flag stays undefined and NodeConfig's default applies (help text quotes it).
    .option('--system <name>', `actor system name (default ${D.system})`)
    .option('--host <host>', `cluster transport host (default ${D.host})`)
    .option('--port <port>', `cluster transport port (default ${D.port})`, port)
    .option('--http-host <host>', `management API host (default ${D.httpHost}: loopback unless you say otherwise)`)
    .option('--http-port <port>', `management API port (default ${D.httpPort})`, port)
    .option(
      '--seed <address>',
      'seed node system@host:port (repeatable; default none: form a cluster of one)',
      collectAddress,
    )
    .option('--app-version <version>', `application version (default ${D.appVersion})`)
    .option('--role <role>', 'node role (repeatable)', collect)
    .option(
      '--attribute <KEY=VALUE>',
      'node attribute that placement selectors match, e.g. zone=eu-west (repeatable)',
      collectAttribute,
    )
    .addOption(new Option('--cluster-secret <secret>', 'shared secret peers must prove').env('ACTOR_TS_CLUSTER_SECRET'))
    .option(
      '--insecure-cluster-port',
      'allow a cluster port beyond loopback without --cluster-secret (a trusted network only)',
    )
    .addOption(new Option('--auth-token <token>', 'bearer token for the API write routes').env('ACTOR_TS_AUTH_TOKEN'))
    .option('--auth-reads', 'require the token for read routes too')
    .option(
      '--down-after-ms <ms>',
      `down a member unreachable this long (default ${DEFAULT_CLUSTER_CONFIG.downAfterMs})`,
      positiveInt,
    )
    .option(
      '--stable-after-ms <ms>',
      'the leader decides a downing only once the merged reachability table has been unchanged this long ' +
        `(default: the --down-after-ms value, ${DEFAULT_CLUSTER_CONFIG.downAfterMs} when neither is given)`,
      positiveInt,
    )
    .option(
      '--monitored-by-nr-of-members <n>',
      `how many members heartbeat each member (default ${DEFAULT_CLUSTER_CONFIG.monitoredByNrOfMembers})`,
      positiveInt,
    )
    .option('--rebalance-interval-ms <ms>', 'periodic rebalance interval', positiveInt)
    .addOption(fallbackOption())
    .option(
      '--data-dir <dir>',
      'keep placements in this directory (one node per directory) so they survive a restart (default: in memory only)',
    )
    .option(
      '--compact-after-items <n>',
      `compact the placement store past this many history items (default ${D.compactAfterItems})`,
      positiveInt,
    )
    .option(
      '--http-max-connections <n>',
      `management API connections open at once (default ${D.httpMaxConnections})`,
      positiveInt,
    )
    .option(
      '--http-request-timeout-ms <ms>',
      `a management request must arrive within this long (default ${D.httpRequestTimeoutMs})`,
      positiveInt,
    )
    .option(
      '--restart-on-removal',
      'when the cluster downs or removes this node, restart it in-process as a new incarnation instead of exiting 1',
    )
    .option('--log-level <level>', `pino log level (default ${D.logLevel})`)
    .addOption(
      shardIdFunctionOption(
        `how the Counter type maps entity ids to shards (default ${D.shardIdFunction}); every node must agree`,
      ),
    )
    .action(async (options: NodeCliOptions, command: Command) => {
      const cluster = usage(command, () => clusterFlags(options));
      usage(command, () => {
        const problem = clusterPortProblem({
          host: options.host ?? D.host,
          clusterSecret: options.clusterSecret,
          insecureClusterPort: options.insecureClusterPort === true,
        });
        if (problem !== undefined) throw new InvalidArgumentError(`refusing to start: ${problem}`);
      });
      process.exitCode = await runNodeCommand({
        system: options.system,
        host: options.host,
        port: options.port,
        httpHost: options.httpHost,
        httpPort: options.httpPort,
        seeds: options.seed,
        appVersion: options.appVersion,
        roles: options.role,
        attributes: options.attribute,
        clusterSecret: options.clusterSecret,
        insecureClusterPort: options.insecureClusterPort,
        authToken: options.authToken,
        authReads: options.authReads,
        logLevel: options.logLevel,
        cluster,
        sharding: options.rebalanceIntervalMs !== undefined ? { rebalanceIntervalMs: options.rebalanceIntervalMs } : {},
        compactAfterItems: options.compactAfterItems,
        dataDir: options.dataDir,
        httpMaxConnections: options.httpMaxConnections,
        httpRequestTimeoutMs: options.httpRequestTimeoutMs,
        restartOnRemoval: options.restartOnRemoval,
        fallback: options.fallback,
        shardIdFunction: options.shardIdFunction,
      });
    });

  program
    .command('shard-of <entityIds...>')
    .description('the shard of each entity id, computed here (no node is asked)')
    .option(
      '--shards <n>',
      `number of shards of the type (default ${COUNTER_SHARDS}, the Counter type's)`,
      positiveInt,
      COUNTER_SHARDS,
    )
    .addOption(
      shardIdFunctionOption(
        `the type's shard id function (default ${DEFAULT_SHARD_ID_FUNCTION}; actor-ts: actor-ts's shard ids)`,
      ),
    )
    .action((entityIds: string[], options: { shards: number; shardIdFunction?: ShardIdFunction }, command: Command) => {
      const fn = options.shardIdFunction ?? DEFAULT_SHARD_ID_FUNCTION;
      const shardOf = (id: string): string => {
        try {
          return String(shardIdFor(id, options.shards, fn));
        } catch (error) {
          if (error instanceof ActorTsError) throw new InvalidArgumentError(error.message);
          throw error;
        }
      };
      const rows = usage(command, () => entityIds.map((id) => [id, shardOf(id)]));
      io.out(table(['entity', 'shard'], rows));
    });

  addLocalClusterCommand(program, io, BIN_PATH);

  addPlacementsCommands(program, io);

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

  addExplainCommand(program, io);
  addCordonCommands(program, io);

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
          ['address', 'status', 'reachable', 'upNumber', 'appVersion', 'attributes', 'cordoned'],
          members.map((m) => [
            m.address + (m.address === self ? ' (this)' : ''),
            m.status,
            m.reachable ? 'yes' : 'NO',
            String(m.upNumber),
            m.appVersion,
            attributesText(m.attributes),
            m.cordoned === true ? 'CORDONED' : m.cordoned === false ? 'no' : '-',
          ]),
        ),
      );
    });

  for (const command of program.commands) {
    if (command.name() !== 'node' && command.name() !== 'local-cluster') addOperatorOptions(command);
  }
  return program;
}

/** Starts the node in this process and runs it until it is told to stop; resolves with the exit code. */
async function runNodeProcess(input: Partial<NodeConfig>): Promise<number> {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  // Started by local-cluster (an IPC channel to it): stop when that parent goes, however it goes.
  if (process.channel) process.once('disconnect', onSignal);
  const how = await runNode(input, { signal: stop.signal });
  process.channel?.unref();
  // The node logged why it stopped (one line); the exit code says whether that was asked for.
  return how === 'left' ? 0 : 1;
}

/** The flags that name a cluster setting, by ClusterConfig field. */
const CLUSTER_FLAGS = {
  downAfterMs: '--down-after-ms',
  stableAfterMs: '--stable-after-ms',
  monitoredByNrOfMembers: '--monitored-by-nr-of-members',
} as const;

/**
 * The cluster overrides the flags ask for, checked as the cluster will check them (some values are only
 * refused in combination: the minority's downing deadline derives from --stable-after-ms), so a refusal is a
 * usage error naming the flags before anything starts. Throws InvalidArgumentError.
 */
export function clusterFlags(options: Pick<NodeCliOptions, keyof typeof CLUSTER_FLAGS>): NodeConfig['cluster'] {
  const cluster: { -readonly [K in keyof typeof CLUSTER_FLAGS]?: number } = {};
  for (const key of Object.keys(CLUSTER_FLAGS) as Array<keyof typeof CLUSTER_FLAGS>) {
    const value = options[key];
    if (value !== undefined) cluster[key] = value;
  }
  try {
    resolveClusterConfig(cluster);
  } catch (error) {
    if (!(error instanceof ActorTsError)) throw error;
    const given = Object.entries(cluster).map(
      ([key, value]) => `${CLUSTER_FLAGS[key as keyof typeof CLUSTER_FLAGS]} ${String(value)}`,
    );
    throw new InvalidArgumentError(`${error.message} (from ${given.length > 0 ? given.join(' ') : 'the defaults'})`);
  }
  return cluster;
}

/** `--fallback`: a name outside FALLBACK_STRATEGIES is a usage error (exit 2) before anything starts. */
function addOperatorOptions(command: Command): void {
  const targets = command.commands.length > 0 ? command.commands : [command];
  for (const target of targets) {
    target
      .addOption(
        new Option('--url <url>', "any node's management API")
          .env('ACTOR_TS_URL')
          .default(`http://${D.httpHost}:${D.httpPort}`),
      )
      .addOption(new Option('--type <typeName>', 'entity type').default(COUNTER_TYPE))
      .addOption(new Option('--token <token>', 'bearer token').env('ACTOR_TS_AUTH_TOKEN'));
  }
}

/** Every field is undefined when its flag was not given: NodeConfig's defaults apply. */
export interface NodeCliOptions {
  system?: string;
  host?: string;
  port?: number;
  httpHost?: string;
  httpPort?: number;
  seed?: string[];
  appVersion?: string;
  role?: string[];
  attribute?: Record<string, string>;
  clusterSecret?: string;
  insecureClusterPort?: boolean;
  authToken?: string;
  authReads?: boolean;
  downAfterMs?: number;
  stableAfterMs?: number;
  monitoredByNrOfMembers?: number;
  rebalanceIntervalMs?: number;
  compactAfterItems?: number;
  dataDir?: string;
  httpMaxConnections?: number;
  httpRequestTimeoutMs?: number;
  restartOnRemoval?: boolean;
  fallback?: FallbackStrategyName;
  logLevel?: string;
  shardIdFunction?: ShardIdFunction;
}

/** `--shard-id-function <name>`, one of SHARD_ID_FUNCTIONS (anything else is a usage error). */
function shardIdFunctionOption(description: string): Option {
  return new Option('--shard-id-function <name>', description).choices(SHARD_ID_FUNCTIONS);
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function collectAttribute(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  let key: string;
  let item: string;
  try {
    [key, item] = parseAttributeAssignment(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  const attributes = { ...previous };
  if (Object.hasOwn(attributes, key) && attributes[key] !== item)
    throw new InvalidArgumentError(`attribute ${key} is given twice with different values`);
  if (!Object.hasOwn(attributes, key) && Object.keys(attributes).length >= MAX_ATTRIBUTES) {
    throw new InvalidArgumentError(`at most ${MAX_ATTRIBUTES} attributes are allowed`);
  }
  return Object.assign(Object.create(null) as Record<string, string>, attributes, Object.fromEntries([[key, item]]));
}

function collectAddress(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), addressArg(value)];
}

function attributesText(attributes: Readonly<Record<string, string>> | undefined): string {
  const entries = Object.entries(attributes ?? {});
  return entries.length === 0 ? '-' : entries.map(([key, value]) => `${key}=${value}`).join(',');
}

/** What to do about an error the API answered, where the API's message cannot know it (how the CLI is given a token). */
function apiErrorHint(error: ApiError): string {
  if (error.status === 401)
    return ' (give the token with --token <token> or the ACTOR_TS_AUTH_TOKEN environment variable)';
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
