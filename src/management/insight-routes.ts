// Explain and dry runs over HTTP: `GET .../explain/{shardId}` (why a shard is where it is, answered by the
// type's coordinator from any node) and the `?dryRun=true` answers of the placements and rebalance writes,
// which server.ts hands over after validating exactly as for the real call.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DryRunMoves, PlacementsDryRun } from '../sharding/index.js';
import { withoutHome } from '../sharding/index.js';
import { parseShardId } from '../sharding/placements/shard-range.js';
import type { PlacementWriteOptions } from '../sharding/api/external-allocation-controller.js';
import type { ManagementBackend, ParsedPin, ShardId } from './backend.js';
import { placementWarnings } from './placement-warnings.js';
import { shardParams } from './schemas.js';
import { knownType, shardRange } from './shard-checks.js';

/** The query of the routes that can dry-run; anything else in it is refused, so a typo never writes for real. */
export const dryRunQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { dryRun: { type: 'string', enum: ['true', 'false'] } },
} as const;

export interface DryRunQuery {
  readonly dryRun?: 'true' | 'false';
}

export function isDryRun(query: DryRunQuery | undefined): boolean {
  return query?.dryRun === 'true';
}

export interface ExplainRouteOptions {
  readonly backend: ManagementBackend;
  /** `/actor-ts/cluster/shards/:typeName` */
  readonly typesPath: string;
  /** Runs first when reads need the token. */
  readonly guard?: (request: FastifyRequest) => Promise<void>;
}

export function registerExplainRoute(app: FastifyInstance, options: ExplainRouteOptions): void {
  const { backend, typesPath, guard } = options;
  app.get<{ Params: { typeName: string; shardId: string } }>(
    `${typesPath}/explain/:shardId`,
    { onRequest: guard, schema: { params: shardParams } },
    async (request) => {
      const typeName = knownType(backend, request.params.typeName);
      return backend.explain(typeName, parseShardId(Number(request.params.shardId), shardRange(backend, typeName)));
    },
  );
}

/** The answer of a placements dry run: the pins as they would be written, the moves, and every warning. */
export async function placementsDryRun(
  backend: ManagementBackend,
  typeName: string,
  pins: ReadonlyArray<ParsedPin>,
  options: PlacementWriteOptions = {},
): Promise<{ dryRun: true; withoutHome: number[] } & PlacementsDryRun> {
  const { placements, moves, warnings } = await backend.dryRunPlacements(typeName, pins, options);
  // The warnings the real call would answer with, then what the strategy would report.
  return {
    dryRun: true,
    placements,
    moves,
    withoutHome: withoutHome(moves),
    warnings: [...placementWarnings(placements, backend.members()), ...warnings],
  };
}

export async function rebalanceDryRun(
  backend: ManagementBackend,
  typeName: string,
  shardIds: readonly ShardId[],
): Promise<{ dryRun: true; withoutHome: number[] } & DryRunMoves> {
  const { moves, warnings } = await backend.dryRunRebalance(typeName, shardIds);
  return { dryRun: true, moves, withoutHome: withoutHome(moves), warnings };
}
