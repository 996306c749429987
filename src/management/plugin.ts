// The management API, console and metrics as one Fastify plugin, for an application that serves HTTP from a
// server of its own: `await app.register(managementPlugin, { backend, metrics })`. Inside the plugin's scope,
// errors answer `{ error, message }`, bodies are JSON only and schema errors read as the node's do. Limits
// (body size, timeouts, connections) and Ajv's options stay the host server's.
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import type { PersistenceError, PlacementStoreError } from '../../crdt/index.js';
import type { ActorTsError } from '../errors.js';
import { sendError, type HttpError } from './errors.js';
import { formatSchemaErrors, registerManagementApi, type ManagementApiOptions } from './server.js';

export type ManagementPluginOptions = ManagementApiOptions;

export const managementPlugin: FastifyPluginAsync<ManagementPluginOptions> = async (app, options) => {
  // As on the node's own server: a mislabelled body is a 415, not a schema error.
  app.removeContentTypeParser('text/plain');
  app.setSchemaErrorFormatter(formatSchemaErrors);
  app.setErrorHandler((error: FastifyError | HttpError | ActorTsError | PlacementStoreError | PersistenceError, _request, reply) =>
    sendError(reply, error),
  );
  registerManagementApi(app, options);
};
