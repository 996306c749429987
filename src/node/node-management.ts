// A node's management server as its wiring makes it: the backend over the node's parts, the security it runs
// under (tokens, HTTPS files followed for changes), the metrics; not listening yet (node.ts starts it last).
import type { FastifyInstance } from 'fastify';
import type { Cluster } from '../cluster/membership/cluster.js';
import type { TcpTransport } from '../cluster/transport/tcp-transport.js';
import type { Logger } from '../logging.js';
import { createManagementServer, useTlsMaterial } from '../management/server.js';
import type { PlacementReplication } from '../placement-replication/placement-replication.js';
import type { ClusterSharding } from '../sharding/cluster-sharding.js';
import type { ExternalAllocationController } from '../sharding/api/external-allocation-controller.js';
import type { FollowedTls } from '../tls/followed-tls.js';
import type { NodeConfig } from './config.js';
import { inboundHealthOf } from './inbound-health.js';
import { NodeManagementBackend } from './management-backend.js';
import type { NodeMetricsSource } from './metrics-source.js';
import type { NodeEntityStore } from './node-entity-store.js';
import { managementSecurity, type ManagementSecurity } from './node-security.js';

/** What the management API of a node serves: its backend's parts, the metrics source and whether writes are held. */
export interface ServedParts {
  readonly cluster: Cluster;
  readonly sharding: ClusterSharding;
  readonly placements: PlacementReplication;
  readonly controllers: Map<string, ExternalAllocationController>;
  readonly transport: TcpTransport;
  readonly metrics: NodeMetricsSource;
  /** Why writes are held right now (this process was just frozen), or undefined. */
  readonly holding: () => string | undefined;
  readonly entityStore: NodeEntityStore | undefined;
}

/** The node's management server (not listening yet) and the security it runs under (tokens, HTTPS files). */
export function serveManagement(
  config: NodeConfig,
  logger: Logger,
  clusterTls: FollowedTls | undefined,
  parts: ServedParts,
): { readonly http: FastifyInstance; readonly security: ManagementSecurity } {
  const { cluster, sharding, placements, controllers, transport, metrics, holding, entityStore } = parts;
  const security = managementSecurity(config, logger, (material) => useTlsMaterial(http, material), clusterTls);
  const http = createManagementServer({
    ...security.serverOptions,
    backend: new NodeManagementBackend(cluster, sharding, placements, controllers, {
      logger: logger.child({ component: 'placements' }),
      holding,
      clockSkew: () => cluster.clock.skewReason(),
      inbound: inboundHealthOf(() => transport.stats()),
      protocols: transport.protocols,
      entityStore: () => entityStore?.problem(),
    }),
    logger: logger.child({ part: 'http' }),
    http: config.http,
    metrics,
  });
  return { http, security };
}
