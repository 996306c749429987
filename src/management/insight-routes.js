import { placementWarnings } from './placement-warnings.js';
import { shardParams } from './schemas.js';
import { inRange, knownType, shardCount } from './shard-checks.js';
/** The query of the routes that can dry-run; anything else in it is refused, so a typo never writes for real. */
export const dryRunQuery = {
    type: 'object',
    additionalProperties: false,
    properties: { dryRun: { type: 'string', enum: ['true', 'false'] } },
};
export function isDryRun(query) {
    return query?.dryRun === 'true';
}
export function registerExplainRoute(app, options) {
    const { backend, typesPath, guard } = options;
    app.get(`${typesPath}/explain/:shardId`, { onRequest: guard, schema: { params: shardParams } }, async (request) => {
        const typeName = knownType(backend, request.params.typeName);
        const shardId = inRange(Number(request.params.shardId), shardCount(backend, typeName), typeName);
        return backend.explain(typeName, shardId);
    });
}
/** The answer of a placements dry run: the pins as they would be written, the moves, and every warning. */
export async function placementsDryRun(backend, typeName, entries) {
    const { placements, moves, warnings } = await backend.dryRunPlacements(typeName, entries);
    // The warnings the real call would answer with, then what the strategy would report.
    return { dryRun: true, placements, moves, warnings: [...placementWarnings(placements, backend.members()), ...warnings] };
}
export async function rebalanceDryRun(backend, typeName, shardIds) {
    const { moves, warnings } = await backend.dryRunRebalance(typeName, shardIds);
    return { dryRun: true, moves, warnings };
}
//# sourceMappingURL=insight-routes.js.map