// The `local-cluster` command: its flags (per-node attributes among them), the banner printed once every
// node it started is ready, and the wait for Ctrl-C. The cluster itself is local-cluster.ts.
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseAttributeAssignment } from '../cluster/attributes.js';
import { DEFAULT_NODE_CONFIG as D } from '../node/config.js';
import { table } from './format.js';
import { DEFAULT_LOCAL_CLUSTER_DATA_DIR, DEFAULT_LOCAL_CLUSTER_NODES, startLocalCluster } from './local-cluster.js';
import { fallbackOption, port, positiveInt, usage, type CliIo } from './operator-support.js';
import type { FallbackStrategyName } from '../sharding/strategies/fallback-choice.js';

interface LocalClusterCliOptions {
  nodes: number;
  system: string;
  host: string;
  basePort: number;
  baseHttpPort: number;
  logDir?: string;
  dataDir: string;
  fresh: boolean;
  authToken?: string;
  attribute?: Array<{ node: number; assignment: string }>;
  fallback?: FallbackStrategyName;
  tls: boolean;
}

export function addLocalClusterCommand(program: Command, io: CliIo, binPath: string): void {
  program
    .command('local-cluster')
    .description('start N node processes on loopback and keep them running until Ctrl-C')
    .option('--nodes <n>', 'how many nodes', positiveInt, DEFAULT_LOCAL_CLUSTER_NODES)
    .option('--system <name>', 'actor system name', D.system)
    .option('--host <host>', 'loopback host', D.host)
    .option('--base-port <port>', 'cluster port of node 1 (node i uses base + i - 1)', port, D.port)
    .option('--base-http-port <port>', 'API port of node 1', port, D.http.port)
    .option('--log-dir <dir>', 'where node logs go (default: a temp directory)')
    .option(
      '--data-dir <dir>',
      'node i keeps its placements in <dir>/node-i, so a restart brings them back',
      DEFAULT_LOCAL_CLUSTER_DATA_DIR,
    )
    .option(
      '--fresh',
      'wipe the data directory first: start with no placements (refused while a node runs on it)',
      false,
    )
    .option(
      '--attribute <N:KEY=VALUE>',
      'give node N an attribute placement selectors match, e.g. 3:zone=eu-west (repeatable)',
      collectNodeAttribute,
    )
    .addOption(new Option('--auth-token <token>', 'bearer token for the API write routes').env('ACTOR_TS_AUTH_TOKEN'))
    .option('--tls', 'mutual TLS between the nodes, with a throwaway CA made by openssl in <data-dir>/tls', false)
    .addOption(fallbackOption())
    .action(async (options: LocalClusterCliOptions, command: Command) => {
      const nodeAttributes = usage(command, () => attributesByNode(options.attribute ?? [], options.nodes));
      io.out(`starting ${options.nodes} nodes...`);
      // The flags are LocalClusterOptions' fields by name (an unset one stays undefined: its default applies).
      const cluster = await startLocalCluster({ ...options, binPath, print: io.out, nodeAttributes });
      io.out('');
      io.out(
        table(
          ['node', 'address', 'API', 'attributes'],
          cluster.urls.map((url, i) => [
            String(i + 1),
            cluster.addresses[i] ?? '',
            url,
            (nodeAttributes.get(i + 1) ?? []).join(',') || '-',
          ]),
        ),
      );
      io.out('');
      io.out(`logs: ${cluster.logDir}`);
      io.out(`placements: ${cluster.dataDir} (kept across runs; --fresh wipes them)`);
      io.out('try:');
      io.out(`  node bin/actor-ts-placement.js shards --url ${cluster.urls[0]}`);
      // The README's example: a selector when a node has an attribute (node 3 under npm start), else an address.
      const attributed = [...nodeAttributes.values()].flat()[0];
      const target = attributed ?? cluster.addresses[2] ?? cluster.addresses[0];
      io.out(`  node bin/actor-ts-placement.js placements set 42 ${target} --url ${cluster.urls[0]}`);
      io.out(`  curl -s -X POST ${cluster.urls[1]}/counters/alice/increment`);
      io.out(
        `  curl -s -X POST '${cluster.urls[1]}/counters/alice/increment?reliable=true'   # retried until applied (at least once)`,
      );
      io.out('Ctrl-C stops every node.');
      await new Promise<void>((resolve) => {
        const onSignal = (): void => resolve();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
      });
      io.out('stopping...');
      await cluster.stop();
      io.out('all nodes stopped');
    });
}

function collectNodeAttribute(
  value: string,
  previous: LocalClusterCliOptions['attribute'],
): NonNullable<LocalClusterCliOptions['attribute']> {
  const match = /^(\d+):(.*)$/s.exec(value);
  if (match === null)
    throw new InvalidArgumentError(
      `"${value}" is not N:KEY=VALUE (the node's number, then its attribute), e.g. 3:zone=eu-west`,
    );
  try {
    parseAttributeAssignment(match[2] as string);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  return [...(previous ?? []), { node: Number(match[1]), assignment: match[2] as string }];
}

/** Node number -> its `KEY=VALUE` list; a node number outside 1..nodes is a usage error. */
function attributesByNode(
  given: NonNullable<LocalClusterCliOptions['attribute']>,
  nodes: number,
): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const { node, assignment } of given) {
    if (node < 1 || node > nodes)
      throw new InvalidArgumentError(
        `--attribute ${node}:${assignment}: there is no node ${node} (nodes are 1..${nodes})`,
      );
    out.set(node, [...(out.get(node) ?? []), assignment]);
  }
  return out;
}
