// The management HTTP API (Fastify): explicit placements and manual rebalance, each with a dry run
// (placement-routes.ts), shard locations, explain (insight-routes.ts), members and health. Every route has a
// JSON schema; every error is `{ error, message }`, including the ones Fastify and Node answer themselves (see
// errors.ts); a rejected request changes nothing.
import type { RequestListener } from 'node:http';
import { Server as HttpsServer, createServer as createHttpsServer } from 'node:https';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifySchemaValidationError,
} from 'fastify';
import { ActorTsError } from '../errors.js';
import type { Logger } from '../logging.js';
import type { PersistenceError, PlacementStoreError } from '../../crdt/index.js';
import { AccessControl } from './access.js';
import { AuditLog } from './audit.js';
import { healthOf, membersOf } from './cluster-answers.js';
import type { ManagementBackend } from './backend.js';
import { registerMemberRoutes } from './member-routes.js';
import { CONSOLE_ASSET_PREFIX, consolePlugin, type ConsolePluginOptions } from './console/plugin.js';
import { METRICS_PATH, metricsPlugin, type MetricsSource } from './metrics.js';
import { WriteRefusals, countRefusedWrites } from './safety-metrics.js';
import { HttpError, clientErrorHandler, frameworkErrorHandler, sendError } from './errors.js';
import { shareConnections } from './connection-share.js';
import { connectionsCheckingIntervalMs, resolveHttpLimits, type HttpConfig } from './limits.js';
import { registerExplainRoute } from './insight-routes.js';
import { registerPlacementRoutes } from './placement-routes.js';
import { knownType } from './shard-checks.js';
import { MAX_PARAM_LENGTH, TypeNameParams, type ShardLocationsAnswer } from './api-shapes.js';

export { HttpError } from './errors.js';

export const API_PREFIX = '/actor-ts';

/** What the management API's routes, console and metrics are served from (`managementPlugin` takes these). */
export interface ManagementApiOptions {
  readonly backend: ManagementBackend;
  /** When set, every write route needs `Authorization: Bearer <token>`. */
  readonly authToken?: string;
  /** With an auth token: also protect the read routes. Default false (reads stay open). */
  readonly authReads?: boolean;
  /**
   * Who may call which route (the auth token and a tokens file's named, scoped tokens); when given, `authToken` and
   * `authReads` are its business and not read here. Default: built from `authToken` and `authReads`.
   */
  readonly access?: AccessControl;
  readonly logger?: Logger;
  /** Feeds `GET /metrics`; without it the node serves no metrics. */
  readonly metrics?: MetricsSource;
  /** The web console at `GET /`; `false` leaves it out. Default: the built page next to the console plugin. */
  readonly console?: ConsolePluginOptions | false;
  /** Where accepted writes are recorded (`GET /actor-ts/audit`); default a new log writing to `logger`. */
  readonly audit?: AuditLog;
  /** More reasons the node is not ok, read at each health request (a TLS file change not in force). */
  readonly problems?: () => readonly string[];
}

/** Options of createManagementServer: what the API serves from, plus the HTTP server's own settings. */
export interface ManagementServerOptions extends ManagementApiOptions {
  /**
   * Body size, timeouts and connection cap; each unset one takes its default from DEFAULT_HTTP_CONFIG. Host and
   * port are not used here (the server is returned not yet listening), so a NodeConfig's `http` passes as it is.
   */
  readonly http?: Partial<HttpConfig>;
  /** Serve HTTPS only with this key and certificate (PEM); swap them later with useTlsMaterial. Default plain HTTP. */
  readonly https?: { readonly key: string; readonly cert: string };
}

/** Whether a path belongs to the management API, its console or its metrics (an application may not take it). */
export function isManagementPath(url: string): boolean {
  return (
    url === API_PREFIX ||
    url.startsWith(`${API_PREFIX}/`) ||
    url === '/' ||
    url.startsWith(CONSOLE_ASSET_PREFIX) ||
    url === METRICS_PATH
  );
}

/**
 * From the moment the server starts closing (the node is stopping), every request still reaching it (one
 * pipelined on a kept-alive connection), a write above all, is refused with a typed 503 `shutting_down`
 * before its body is read. Register before the first request.
 */
export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    await reply
      .code(503)
      .send({ error: 'shutting_down', message: 'this node is shutting down: send the request to another node' });
  });
}

/**
 * The management HTTP API (members, shards, placements, rebalance, drain, health, metrics) over a ManagementBackend,
 * as a Fastify instance not yet listening.
 */
export function createManagementServer(options: ManagementServerOptions): FastifyInstance {
  const limits = resolveHttpLimits(options.http);
  const serverOptions = {
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: connectionsCheckingIntervalMs(limits),
  };
  const tls = options.https;
  const app: FastifyInstance = Fastify({
    bodyLimit: limits.bodyLimit,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // HTTPS only: the server speaks TLS on its port, so a plain HTTP request never gets an answer. Built here (not
    // through Fastify's `https` option) so the instance keeps one type and the secure context can be swapped.
    ...(tls === undefined
      ? { http: serverOptions }
      : {
          serverFactory: (handler: RequestListener) =>
            createHttpsServer({ ...serverOptions, key: tls.key, cert: tls.cert, minVersion: 'TLSv1.2' }, handler),
        }),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    ...(options.logger ? { loggerInstance: options.logger as FastifyBaseLogger } : { logger: false }),
    // Fastify logs every request twice at info ("incoming request", "request completed"): an open console
    // polling a node would write ~100 MB a day. One debug line per request instead (logRequests below).
    logController: new LogController({ disableRequestLogging: true }),
    ajv: { customOptions: { allErrors: false, coerceTypes: false, removeAdditional: false } },
    schemaErrorFormatter: formatSchemaErrors,
    // Fastify's own answer while closing is an untyped 503; the hook below gives the typed one.
    return503OnClosing: false,
  });
  refuseWhileClosing(app);
  logRequests(app);
  // Past the cap a new connection is closed at once, before reading from it, unless a client over its share
  // must make room for it.
  shareConnections(app.server, limits);
  // Only JSON bodies: Fastify's built-in text/plain parser would turn a mislabelled body into a schema
  // error instead of the 415 it is.
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler(
    (error: FastifyError | HttpError | ActorTsError | PlacementStoreError | PersistenceError, _request, reply) =>
      sendError(reply, error),
  );
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: 'not_found', message: `no route ${request.method} ${request.url}` }),
  );
  registerManagementApi(app, options);
  return app;
}

/**
 * The management API's routes, the console and the metrics, registered on `app` (a server of its own, or a
 * scope of an application's server: see `managementPlugin`). Errors answer `{ error, message }` through the
 * error handler of the scope they are registered in.
 */
export function registerManagementApi(app: FastifyInstance, options: ManagementApiOptions): void {
  const { backend } = options;
  const audit = options.audit ?? new AuditLog(options.logger);
  // Every refused write is counted by its code (actor_ts_placement_writes_refused_total), whoever refused it.
  const refusals = new WriteRefusals();
  countRefusedWrites(app, API_PREFIX, refusals);
  const access = options.access ?? new AccessControl({ authToken: options.authToken, authReads: options.authReads });
  const guardWrite = access.guard('operate');
  const guardRead = access.guard('read');
  // After auth and validation, before the handler: a node outside the cluster must not take writes it
  // could only keep to itself.
  const memberOnly = async (): Promise<void> => {
    const state = backend.writeAccess();
    if (!state.writable) throw new HttpError(503, state.code, state.reason);
  };
  const typesPath = `${API_PREFIX}/cluster/shards/:typeName`;
  const write = { onRequest: guardWrite, preHandler: memberOnly };

  // With a tokens file, health is the one open route (load balancers and local-cluster probe it).
  const guardHealth = access.scoped ? undefined : guardRead;
  const problems = () => [...access.problems(), ...(options.problems?.() ?? [])];
  app.get(`${API_PREFIX}/health`, { onRequest: guardHealth }, async () => healthOf(backend, problems()));
  app.get(`${API_PREFIX}/cluster/members`, { onRequest: guardRead }, async () => membersOf(backend));

  app.get<{ Params: TypeNameParams }>(
    typesPath,
    { onRequest: guardRead, schema: { params: TypeNameParams } },
    async (request): Promise<ShardLocationsAnswer> => {
      const typeName = knownType(backend, request.params.typeName);
      return backend.shardLocations(typeName);
    },
  );

  registerPlacementRoutes(app, { backend, audit, typesPath, write, guardRead, byOf: access.authorOf });

  registerExplainRoute(app, { backend, typesPath, ...(guardRead ? { guard: guardRead } : {}) });
  registerMemberRoutes(app, { prefix: API_PREFIX, backend, audit, access, memberOnly });
  if (options.console !== false) void app.register(consolePlugin, options.console ?? {});
  if (options.metrics !== undefined) {
    void app.register(metricsPlugin, {
      source: options.metrics,
      metrics: { refusals, access },
      ...(guardRead ? { guard: guardRead } : {}),
    });
  }
}

/** One line per answered request, at debug: method, URL, status and time; errors are logged where they are raised. */
function logRequests(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    request.log.debug(
      { method: request.method, url: request.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });
}

export function formatSchemaErrors(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const parts = errors
    // An `if` failure only says which branch applied; the branch's own error says what is wrong.
    .filter((error) => error.keyword !== 'if')
    .map((error) => {
      const extra = error.keyword === 'additionalProperties' ? ` (${String(error.params['additionalProperty'])})` : '';
      return `${dataVar}${error.instancePath} ${error.message ?? 'is invalid'}${extra}`;
    });
  return new Error(parts.length > 0 ? parts.join(', ') : `${dataVar} does not match the schema`);
}

/**
 * New connections of an HTTPS management server use this key and certificate from now on; established ones keep
 * theirs. Throws for a server created without `https`.
 */
export function useTlsMaterial(app: FastifyInstance, material: { readonly key: string; readonly cert: string }): void {
  if (!(app.server instanceof HttpsServer)) {
    throw new ActorTsError('invalid_argument', 'the management server was created without https');
  }
  app.server.setSecureContext({ key: material.key, cert: material.cert });
}
