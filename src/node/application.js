import { ActorTsError } from '../errors.js';
import { ExternalAllocationController } from '../sharding/placements/external-allocation-controller.js';
import { checkShardedType } from '../sharding/sharded-type.js';
import { FALLBACK_STRATEGIES, externalAllocationStrategy, fallbackStrategy, isFallbackStrategyName, } from '../sharding/strategies/index.js';
/** Checks an application (`invalid_argument` naming the problem); nothing is started. */
export function checkApplication(app) {
    const { entityTypes, httpRoutes } = app;
    if (httpRoutes !== undefined && typeof httpRoutes !== 'function')
        throw invalid('httpRoutes must be a function (app, node) => void');
    if (entityTypes === undefined)
        return;
    if (!Array.isArray(entityTypes))
        throw invalid('entityTypes must be an array of { typeName, behavior, numberOfShards?, role?, fallback? }');
    const seen = new Set();
    entityTypes.forEach((type, index) => {
        if (typeof type !== 'object' || type === null)
            throw invalid(`entityTypes[${index}] must be an object`);
        const { typeName, behavior, numberOfShards, role, fallback, shardIdFunction } = type;
        const name = typeof typeName === 'string' ? `entity type ${JSON.stringify(typeName)}` : `entityTypes[${index}]`;
        if (fallback !== undefined && !isStrategy(fallback) && !isFallbackStrategyName(fallback)) {
            throw invalid(`${name}: fallback must be an AllocationStrategy (allocate() and rebalance()) or one of ${FALLBACK_STRATEGIES.join(', ')}`);
        }
        try {
            // The runtime's own checks (name, behavior, shard count, role), made now rather than at init.
            checkShardedType({ typeName: typeName, behavior: behavior, numberOfShards, role, shardIdFunction });
        }
        catch (error) {
            throw invalid(`${name}: ${error.message}`);
        }
        if (seen.has(typeName))
            throw invalid(`entity type ${JSON.stringify(typeName)} is given twice in entityTypes`);
        seen.add(typeName);
    });
}
/**
 * Initialises each type under `externalAllocationStrategy` over its fallback, its pins read from the runtime's
 * own view of the placement store; returns each type's controller.
 */
export function initEntityTypes(sharding, cluster, types, logger, defaultFallback) {
    const controllers = new Map();
    for (const { typeName, behavior, numberOfShards, role, fallback, shardIdFunction } of types) {
        sharding.init({
            typeName,
            behavior,
            ...(numberOfShards === undefined ? {} : { numberOfShards }),
            ...(role === undefined ? {} : { role }),
            ...(shardIdFunction === undefined ? {} : { shardIdFunction }),
            allocationStrategy: externalAllocationStrategy(fallback === undefined ? defaultFallback() : typeof fallback === 'string' ? fallbackStrategy(fallback, cluster) : fallback, sharding.placementState(typeName), {
                cluster,
                onWarning: (message, details) => logger.warn({ ...details, typeName }, message),
            }),
        });
        // Every placement written or removed is logged with its reason and author: the audit trail of pins.
        controllers.set(typeName, new ExternalAllocationController(sharding, typeName, { logger: logger.child({ component: 'placements' }) }));
    }
    return controllers;
}
function isStrategy(value) {
    const candidate = value;
    return typeof candidate === 'object' && candidate !== null && typeof candidate.allocate === 'function' && typeof candidate.rebalance === 'function';
}
function invalid(message) {
    return new ActorTsError('invalid_argument', message);
}
//# sourceMappingURL=application.js.map