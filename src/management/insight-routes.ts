// Explain and dry runs over HTTP: `GET .../explain/{shardId}` (why a shard is where it is, answered by the
// type's coordinator from any node) and the `?dryRun=true` answers of the placements and rebalance writes,
// which server.ts hands over after validating exactly as for the real call.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { waitingIn, type DryRunMove } from '../sharding/index.js';
import { parseShardId } from '../sharding/placements/shard-range.js';
import type { PlacementWriteOptions } from '../sharding/api/external-allocation-controller.js';
import type { ManagementBackend, ParsedPin, ShardId } from './backend.js';
import { placementWarnings } from './placement-warnings.js';
import {
  ShardParams,
  type DryRunQuery,
  type ExplainAnswer,
  type PlacementsDryRunAnswer,
  type RebalanceDryRun,
} from './api-shapes.js';
import { knownType, shardRange } from './shard-checks.js';

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
  app.get<{ Params: ShardParams }>(
    `${typesPath}/explain/:shardId`,
    { onRequest: guard, schema: { params: ShardParams } },
    async (request): Promise<ExplainAnswer> => {
      const typeName = knownType(backend, request.params.typeName);
      const shardId = parseShardId(Number(request.params.shardId), shardRange(backend, typeName));
      const explanation = await backend.explain(typeName, shardId);
      // The coordinator knows homes, not entities: the node that answers adds what it runs of the type.
      const count = backend.entityTypes().get(typeName)?.activeEntities;
      return count === undefined
        ? explanation
        : { ...explanation, activeEntities: { node: backend.self.toString(), count } };
    },
  );
}

/** The answer of a placements dry run: the pins as they would be written, the moves, and every warning. */
export async function placementsDryRun(
  backend: ManagementBackend,
  typeName: string,
  pins: ReadonlyArray<ParsedPin>,
  options: PlacementWriteOptions = {},
): Promise<PlacementsDryRunAnswer> {
  const { placements, moves, warnings } = await backend.dryRunPlacements(typeName, pins, options);
  // The warnings the real call would answer with, then what the strategy would report.
  return {
    dryRun: true,
    placements,
    moves,
    ...waitingFields(moves),
    warnings: [...placementWarnings(placements, backend.members()), ...warnings],
  };
}

export async function rebalanceDryRun(
  backend: ManagementBackend,
  typeName: string,
  shardIds: readonly ShardId[],
): Promise<RebalanceDryRun> {
  const { moves, warnings } = await backend.dryRunRebalance(typeName, shardIds);
  return { dryRun: true, moves, ...waitingFields(moves), warnings };
}

/** The shards a dry run would leave waiting, under their name and their deprecated old one (`withoutHome`). */
function waitingFields(moves: ReadonlyArray<DryRunMove>): { waiting: number[]; withoutHome: number[] } {
  const waiting = waitingIn(moves);
  return { waiting, withoutHome: waiting };
}
