// The routes that read and write pins and move shards: GET, POST (one pin or many, or their dry run) and DELETE of
// `.../placements`, and POST `.../rebalance` (or its dry run). Each write is audited with its author and reason;
// a rejected request changes nothing.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parsePins } from '../sharding/placements/pin-request.js';
import { parseShardId } from '../sharding/placements/shard-range.js';
import type { AccessHook } from './access.js';
import { commonText, targetsText, type AuditLog } from './audit.js';
import type { ManagementBackend } from './backend.js';
import { HttpError } from './errors.js';
import { isDryRun, placementsDryRun, rebalanceDryRun } from './insight-routes.js';
import { placementWarnings } from './placement-warnings.js';
import { knownType, shardRange } from './shard-checks.js';
import {
  DryRunQuery,
  PlacementsQuery,
  ProvenanceQuery,
  RebalanceBody,
  SetPlacementsBody,
  ShardParams,
  TypeNameParams,
  type PinsWritten,
  type PlacementsAnswer,
  type RebalanceAnswer,
} from './api-shapes.js';

/** What the placement routes need of registerManagementApi. */
export interface PlacementRoutes {
  readonly backend: ManagementBackend;
  readonly audit: AuditLog;
  /** `.../cluster/shards/:typeName`. */
  readonly typesPath: string;
  /** A write's hooks: the operate scope, then membership (a node outside the cluster takes no writes). */
  readonly write: { readonly onRequest: AccessHook | undefined; readonly preHandler: () => Promise<void> };
  readonly guardRead: AccessHook | undefined;
  /** The author of a write: the one it names, else the token's name. */
  readonly byOf: (request: FastifyRequest, given: string | undefined) => string | undefined;
}

/** Registers the pin and rebalance routes under `typesPath`. */
export function registerPlacementRoutes(app: FastifyInstance, routes: PlacementRoutes): void {
  registerPinRead(app, routes);
  registerPinWrite(app, routes);
  registerPinDelete(app, routes);
  registerRebalance(app, routes);
}

/** GET .../placements: the type's pins by ascending shard id; expired ones only with includeExpired. */
function registerPinRead(app: FastifyInstance, { backend, typesPath, guardRead }: PlacementRoutes): void {
  app.get<{ Params: TypeNameParams; Querystring: PlacementsQuery }>(
    `${typesPath}/placements`,
    { onRequest: guardRead, schema: { params: TypeNameParams, querystring: PlacementsQuery } },
    async (request): Promise<PlacementsAnswer> => {
      const typeName = knownType(backend, request.params.typeName);
      const includeExpired = request.query.includeExpired === 'true';
      const placements = [...backend.placements(typeName, { includeExpired })].sort((a, b) => a.shardId - b.shardId);
      return { placements };
    },
  );
}

/** A pin entry with its author: the one it names, else the token's name; unchanged when there is neither. */
function withBy<T extends { readonly by?: string | undefined }>(entry: T, by: string | undefined): T {
  return by === undefined ? entry : { ...entry, by };
}

/** POST .../placements: one pin or many, all parsed before any is written, or their dry run. */
function registerPinWrite(app: FastifyInstance, route: PlacementRoutes): void {
  const { backend, audit, typesPath, write, byOf } = route;
  app.post<{ Params: TypeNameParams; Body: SetPlacementsBody; Querystring: DryRunQuery }>(
    `${typesPath}/placements`,
    { ...write, schema: { params: TypeNameParams, body: SetPlacementsBody, querystring: DryRunQuery } },
    async (request, reply) => {
      const typeName = knownType(backend, request.params.typeName);
      const body = request.body;
      const requested = 'placements' in body ? body.placements : [body];
      // Bulk: the write's flag, or every entry's; single: the entry's own.
      const allowUnknownTarget =
        ('placements' in body && body.allowUnknownTarget === true) ||
        requested.every((entry) => entry.allowUnknownTarget === true);
      // The schema checked the JSON shape; here each entry is parsed once (shard range, options, target),
      // all before any is written, and the backend takes the parsed pins as they are: a rejected request
      // changes nothing.
      const entries = parsePins(
        requested.map(({ allowUnknownTarget: _allow, ...entry }) => withBy(entry, byOf(request, entry.by))),
        backend.pinScope(typeName),
      );
      if (isDryRun(request.query)) return placementsDryRun(backend, typeName, entries, { allowUnknownTarget });
      const written = await backend.setPlacements(typeName, entries, { allowUnknownTarget });
      audit.record({
        action: 'pin',
        typeName,
        shardIds: written.map((p) => p.shardId),
        target: targetsText(written.map((p) => p.target)),
        by: commonText(written.map((p) => p.by)),
        reason: commonText(written.map((p) => p.reason)),
        hlc: written[written.length - 1]?.hlc ?? null,
      });
      const warnings = placementWarnings(
        written,
        backend.members(),
        new Set(backend.cordons().map((cordon) => cordon.address)),
      );
      const answer: PinsWritten = { placements: written, warnings };
      return reply.code(202).send(answer);
    },
  );
}

/** DELETE .../placements/:shardId: removes a shard's pin (404 when it has none). */
function registerPinDelete(app: FastifyInstance, { backend, audit, typesPath, write, byOf }: PlacementRoutes): void {
  app.delete<{ Params: ShardParams; Querystring: ProvenanceQuery }>(
    `${typesPath}/placements/:shardId`,
    { ...write, schema: { params: ShardParams, querystring: ProvenanceQuery } },
    async (request, reply) => {
      const typeName = knownType(backend, request.params.typeName);
      const shardId = parseShardId(Number(request.params.shardId), shardRange(backend, typeName));
      const removed = await backend.removePlacement(typeName, shardId);
      if (!removed) throw new HttpError(404, 'not_found', `shard ${shardId} of ${typeName} has no explicit placement`);
      audit.record({
        action: 'unpin',
        typeName,
        shardIds: [shardId],
        target: null,
        by: byOf(request, request.query.by),
        reason: request.query.reason,
        hlc: null,
      });
      return reply.code(204).send();
    },
  );
}

/** POST .../rebalance: hands the shards off to where the strategy puts them now (202), or its dry run. */
function registerRebalance(app: FastifyInstance, { backend, audit, typesPath, write, byOf }: PlacementRoutes): void {
  app.post<{ Params: TypeNameParams; Body: RebalanceBody; Querystring: DryRunQuery }>(
    `${typesPath}/rebalance`,
    { ...write, schema: { params: TypeNameParams, body: RebalanceBody, querystring: DryRunQuery } },
    async (request, reply) => {
      const typeName = knownType(backend, request.params.typeName);
      const range = shardRange(backend, typeName);
      const shardIds = [...new Set(request.body.shardIds.map((id) => parseShardId(id, range)))];
      if (isDryRun(request.query)) return rebalanceDryRun(backend, typeName, shardIds);
      const outcome = await backend.rebalance(typeName, shardIds);
      if (outcome.accepted.length === 0 && outcome.unallocated.length > 0) {
        // Nothing was handed off: answering 202 with nothing accepted would read as success.
        throw new HttpError(
          409,
          'not_allocated',
          `shards ${outcome.unallocated.join(', ')} of ${typeName} have no home yet, so nothing was moved; their first message allocates them`,
        );
      }
      const { reason } = request.body;
      const by = byOf(request, request.body.by);
      audit.record({
        action: 'rebalance',
        typeName,
        shardIds: [...outcome.accepted],
        target: null,
        by,
        reason,
        hlc: null,
      });
      const { accepted, unallocated } = outcome;
      const answer: RebalanceAnswer = { accepted, unallocated, homeless: unallocated };
      return reply.code(202).send(answer);
    },
  );
}
