import { describeValue } from '../logging.js';
export const COUNTER_TYPE = 'Counter';
export const COUNTER_SHARDS = 1000;
export const counterBehavior = (ctx) => {
    let value = 0;
    const answer = () => ({ entityId: ctx.entityId, shardId: ctx.shardId, value, node: ctx.node.toString() });
    return {
        receive(message) {
            const command = message;
            if (command?.op === 'increment') {
                const by = command.by ?? 1;
                if (!Number.isSafeInteger(by))
                    throw new Error('increment "by" must be an integer');
                value += by;
                return answer();
            }
            if (command?.op === 'get')
                return answer();
            // Bounded: the message came from the network and may be any size or shape.
            throw new Error(`unknown counter command ${describeValue(message, 200)}`);
        },
    };
};
const entityParams = {
    type: 'object',
    required: ['entityId'],
    properties: { entityId: { type: 'string', minLength: 1, maxLength: 256 } },
};
/** `POST /counters/:entityId/increment` and `GET /counters/:entityId`, both answering a CounterValue. */
export function registerCounterRoutes(app, sharding, askTimeoutMs = 5000) {
    app.post('/counters/:entityId/increment', { schema: { params: entityParams } }, async (request) => sharding.entityRefFor(COUNTER_TYPE, request.params.entityId).ask({ op: 'increment' }, { timeoutMs: askTimeoutMs }));
    app.get('/counters/:entityId', { schema: { params: entityParams } }, async (request) => sharding.entityRefFor(COUNTER_TYPE, request.params.entityId).ask({ op: 'get' }, { timeoutMs: askTimeoutMs }));
}
//# sourceMappingURL=counter.js.map