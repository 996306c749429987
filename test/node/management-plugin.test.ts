// An application wired by hand (the README's library way) with a Fastify server of its own gets the management
// API, console and metrics by registering managementPlugin there: its routes answer for the application's
// type, errors keep the { error, message } shape, and the application's own routes are untouched.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Cluster,
  ClusterSharding,
  ExternalAllocationController,
  LeastShardAllocationStrategy,
  NodeManagementBackend,
  PlacementReplication,
  PlacementStore,
  TcpTransport,
  externalAllocationStrategy,
  managementPlugin,
  nodeMetricsSource,
} from '../../src/index.js';
import { expectError, pollUntil } from '../management/node-fixture.js';

describe('managementPlugin on an application server', () => {
  let transport: TcpTransport;
  let cluster: Cluster;
  let replica: PlacementReplication;
  let sharding: ClusterSharding;
  let app: FastifyInstance;

  beforeAll(async () => {
    transport = await TcpTransport.start({ system: 'app', host: '127.0.0.1', port: 0 });
    cluster = new Cluster({ transport, config: { seedNodes: [] } });
    const store = new PlacementStore({ node: transport.self.toString() });
    replica = new PlacementReplication(store, transport, cluster);
    const metrics = nodeMetricsSource(cluster, store, () => sharding);
    sharding = new ClusterSharding({ transport, membership: cluster, placements: replica, events: metrics.hub });
    const placements = new ExternalAllocationController(sharding, 'Chat');
    sharding.init({
      typeName: 'Chat',
      numberOfShards: 30,
      behavior: (ctx) => ({ receive: () => ctx.node.toString() }),
      allocationStrategy: externalAllocationStrategy(
        new LeastShardAllocationStrategy({ cluster }),
        sharding.placementState('Chat'),
        { cluster },
      ),
    });
    app = Fastify();
    app.get('/hello', async () => ({ hello: 'world' }));
    await app.register(managementPlugin, {
      backend: new NodeManagementBackend(cluster, sharding, replica, new Map([['Chat', placements]])),
      metrics,
    });
    cluster.start();
    await app.ready();
    await pollUntil(
      async () =>
        (await app.inject({ method: 'GET', url: '/actor-ts/health' })).json<{ status: string }>().status === 'ok',
      'node up',
    );
  });

  afterAll(async () => {
    await sharding.shutdown();
    replica.close();
    await app.close();
    cluster.shutdown();
    await transport.close();
  });

  it('serves the API for the application type, the console, the metrics and the application routes side by side', async () => {
    const health = (await app.inject({ method: 'GET', url: '/actor-ts/health' })).json<{ entityTypes: unknown }>();
    expect(health.entityTypes).toEqual([
      { typeName: 'Chat', numberOfShards: 30, shardIdFunction: 'fnv1a-utf8', durable: false, activeEntities: 0 },
    ]);
    expect(await sharding.entityRefFor('Chat', 'c1').ask('hi')).toBe(transport.self.toString());
    const located = await app.inject({ method: 'GET', url: '/actor-ts/cluster/shards/Chat' });
    expect(located.statusCode).toBe(200);
    const pinned = await app.inject({
      method: 'POST',
      url: '/actor-ts/cluster/shards/Chat/placements',
      payload: { shardId: 3, target: transport.self.toString() },
    });
    expect(pinned.statusCode).toBe(202);
    expectError(await app.inject({ method: 'GET', url: '/actor-ts/cluster/shards/Nope' }), 404, 'unknown_type');
    expectError(
      await app.inject({ method: 'POST', url: '/actor-ts/cluster/shards/Chat/rebalance', payload: { shardIds: 'x' } }),
      400,
      'invalid_request',
    );
    expect((await app.inject({ method: 'GET', url: '/' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(
      /actor_ts_shards_hosted\{type="Chat"\} 1/,
    );
    expect((await app.inject({ method: 'GET', url: '/hello' })).json()).toEqual({ hello: 'world' });
  });
});
