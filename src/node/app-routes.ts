// The application's own routes on a node's HTTP server (`startNode({ httpRoutes })`): registered in a scope
// of their own before the server listens, behind the same access checks as the management API (writes need the
// token or the `operate` scope, reads too with authReads or `read`), answering errors as `{ error, message }`. A route on a path the
// management API, console or metrics own is refused, and so is a registration that throws.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ActorTsError } from '../errors.js';
import type { AccessControl } from '../management/access.js';
import { isManagementPath } from '../management/server.js';
import { describeError } from '../sharding/region/entity.js';
import type { NodeHttpRoutes } from './application.js';
import type { RunningNode } from './running-node.js';

/** Thrown (inside Fastify) when an application route takes a management path; kept as is by the caller. */
class OwnedRouteError extends ActorTsError {}

export async function registerAppRoutes(
  http: FastifyInstance,
  routes: NodeHttpRoutes,
  node: RunningNode,
  access: AccessControl,
): Promise<void> {
  const guard = access.guardByMethod();
  // The management API's own plugins load first, so a failure of theirs is not blamed on the application.
  await http.after();
  try {
    await http.register(async (scope) => {
      scope.addHook('onRoute', (route) => {
        if (isManagementPath(route.url)) {
          const method = Array.isArray(route.method) ? route.method.join(',') : String(route.method);
          throw new OwnedRouteError(
            'invalid_argument',
            `httpRoutes registered ${method} ${route.url}, a path the management API owns`,
          );
        }
      });
      scope.addHook('onRequest', async (request: FastifyRequest) => guard?.(request));
      await routes(scope, node);
    });
  } catch (error) {
    if (error instanceof OwnedRouteError) throw new ActorTsError('invalid_argument', error.message);
    throw new ActorTsError('invalid_argument', `httpRoutes failed: ${describeError(error)}`);
  }
}
