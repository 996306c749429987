// The management API, console and metrics as one Fastify plugin, for an application that serves HTTP from a
// server of its own: `await app.register(managementPlugin, { backend, metrics })`. Inside the plugin's scope,
// errors answer `{ error, message }`, bodies are JSON only and schema errors read as the node's do. Limits
// (body size, timeouts, connections) and Ajv's options stay the host server's.
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import type { PersistenceError, PlacementStoreError } from '../../crdt/index.js';
import type { ActorTsError } from '../errors.js';
import { sendError, type HttpError } from './errors.js';
import { formatSchemaErrors, registerManagementApi, type ManagementApiOptions } from './server.js';

/** What `managementPlugin` serves from: the backend, metrics, auth, audit log (as the node's own server takes them). */
export type ManagementPluginOptions = ManagementApiOptions;

/**
 * The management API, the console and the metrics as one Fastify plugin, for an application that serves them from its
 * own server: every route, the auth hook and the `{ error, message }` error shape of the node's own server.
 */
export const managementPlugin: FastifyPluginAsync<ManagementPluginOptions> = async (app, options) => {
  // As on the node's own server: a mislabelled body is a 415, not a schema error.
  app.removeContentTypeParser('text/plain');
  app.setSchemaErrorFormatter(formatSchemaErrors);
  app.setErrorHandler(
    (error: FastifyError | HttpError | ActorTsError | PlacementStoreError | PersistenceError, _request, reply) =>
      sendError(reply, error),
  );
  registerManagementApi(app, options);
};
