// `shard-of`: which shard each entity id is in. With `--type` or `--url` the node is asked for the type's shard
// count and shard-id function (the answer an operator pins by must be the node's, never a default's); offline,
// `--shards` is required and the function defaults to the runtime's. Giving both ways at once is a usage error.
import { Command, InvalidArgumentError, type OptionValueSource } from 'commander';
import { ActorTsError } from '../errors.js';
import {
  DEFAULT_SHARD_ID_FUNCTION,
  isShardIdFunction,
  shardIdFor,
  type ShardIdFunction,
} from '../sharding/core/shard-id.js';
import { ApiError } from './client.js';
import { table } from './format.js';
import { shardIdFunctionOption } from './node-command.js';
import { connect, positiveInt, usage, type CliIo } from './operator-support.js';

interface ShardOfOptions {
  readonly shards?: number;
  readonly shardIdFunction?: ShardIdFunction;
}

/** How ids are mapped to shards: the type's own, as a node reports it, or what the operator gave. */
interface Sharding {
  readonly shards: number;
  readonly fn: ShardIdFunction;
}

/** Adds `shard-of <entityIds...>` to `program`. */
export function addShardOfCommand(program: Command, io: CliIo): void {
  program
    .command('shard-of <entityIds...>')
    .description(
      "the shard of each entity id: the type's shard count and function from a node (--type, --url), or --shards",
    )
    .option('--shards <n>', 'number of shards, to compute without asking a node', positiveInt)
    .addOption(shardIdFunctionOption(`with --shards: the shard id function (default ${DEFAULT_SHARD_ID_FUNCTION})`))
    .action(async (entityIds: string[], options: ShardOfOptions, command: Command) => {
      const sharding = await shardingFor(command, options);
      const shardOf = (id: string): string => {
        try {
          return String(shardIdFor(id, sharding.shards, sharding.fn));
        } catch (error) {
          if (error instanceof ActorTsError) throw new InvalidArgumentError(error.message);
          throw error;
        }
      };
      const rows = usage(command, () => entityIds.map((id) => [id, shardOf(id)]));
      io.out(table(['entity', 'shard'], rows));
    });
}

function given(command: Command, option: string): boolean {
  const source: OptionValueSource | undefined = command.getOptionValueSource(option);
  return source === 'cli' || source === 'env';
}

async function shardingFor(command: Command, options: ShardOfOptions): Promise<Sharding> {
  const asksNode = given(command, 'type') || given(command, 'url');
  if (!asksNode) {
    if (options.shards === undefined) {
      usage(command, () => {
        throw new InvalidArgumentError(
          "give --type (and --url) to ask a node for the type's shard count, or --shards <n> to compute offline",
        );
      });
    }
    return { shards: options.shards!, fn: options.shardIdFunction ?? DEFAULT_SHARD_ID_FUNCTION };
  }
  if (options.shards !== undefined || options.shardIdFunction !== undefined) {
    usage(command, () => {
      throw new InvalidArgumentError(
        '--shards and --shard-id-function are for offline use: give them or --type, not both',
      );
    });
  }
  const { client, type } = connect(command);
  let health: Awaited<ReturnType<typeof client.health>>;
  try {
    health = await client.health();
  } catch (error) {
    if (error instanceof ApiError && error.code === 'unreachable') {
      throw new ApiError(0, 'unreachable', `${error.message}; to compute without a node give --shards <n>`);
    }
    throw error;
  }
  const known = health.entityTypes ?? [];
  const found = known.find((entry) => entry.typeName === type);
  if (found === undefined) {
    const names = known.map((entry) => entry.typeName).join(', ') || 'none';
    throw new ApiError(404, 'unknown_type', `the node runs no entity type "${type}" (it runs: ${names})`);
  }
  const fn = found.shardIdFunction;
  if (!isShardIdFunction(fn)) {
    // A node of a release before 0.3 reports the count only: a default function could name the wrong shard.
    throw new ApiError(
      0,
      'unknown_shard_id_function',
      `the node does not say ${type}'s shard id function; ` +
        `give --shards ${found.numberOfShards} and --shard-id-function`,
    );
  }
  return { shards: found.numberOfShards, fn };
}
