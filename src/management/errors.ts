// Every error the management server answers, in the API's one shape `{ "error": "<code>", "message": "<text>" }`:
// the handlers' own errors, the ones Fastify raises (body limit, media type, JSON parse, router limits) and
// the ones Node's HTTP parser raises before Fastify sees a request (timeouts, oversized headers, bad syntax).
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { CodedError, PersistenceError, PlacementStoreError } from '../../crdt/index.js';
import { ActorTsError } from '../errors.js';
import { CordonError } from '../sharding/placements/cordons.js';

/** An HTTP error with the API's error code. */
export class HttpError extends CodedError<string> {
  constructor(
    readonly statusCode: number,
    code: string,
    message: string,
  ) {
    super(code, message);
  }
}

/**
 * The one table from a typed error's code (ActorTsError, PlacementStoreError, CordonError, PersistenceError)
 * to its HTTP status; a code not listed is the caller's bad input (400). Routes that build an HttpError
 * themselves name their status at the throw, next to the condition that causes it.
 */
const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  // This node cannot take the request now (stopped, storage or clock unusable, coordinator away): another can.
  storage_unavailable: 503,
  hlc_out_of_range: 503,
  clock_skew: 503,
  not_running: 503,
  coordinator_unreachable: 503,
  entity_store_unavailable: 503,
  entity_fenced: 503,
  timeout: 504,
  // Refusals about the cluster's state rather than the input's shape.
  unknown_target: 409,
  no_capacity: 409,
  cordon_conflict: 409,
  unknown_member: 404,
  not_cordoned: 404,
};

/** The HTTP status a typed error's code is answered with. */
export function statusOf(code: string): number {
  return Object.hasOwn(STATUS_OF_CODE, code) ? (STATUS_OF_CODE[code] as number) : 400;
}

export function sendError(
  reply: FastifyReply,
  error: FastifyError | HttpError | ActorTsError | PlacementStoreError | PersistenceError | CordonError,
): FastifyReply {
  if (error instanceof HttpError)
    return reply.code(error.statusCode).send({ error: error.code, message: error.message });
  if (error instanceof PersistenceError) {
    // This node could not make the write durable (or its storage is closed): not acknowledged, never
    // replicated; another node can take it.
    reply.log.error({ err: error }, 'placement write not committed');
    return reply.code(statusOf('storage_unavailable')).send({ error: 'storage_unavailable', message: error.message });
  }
  if (error instanceof PlacementStoreError || error instanceof ActorTsError || error instanceof CordonError) {
    // A delivery timeout says whether the message left this node (applied or not: unknown) or never did.
    const delivered =
      'delivered' in error && typeof error.delivered === 'boolean' ? { delivered: error.delivered } : {};
    return reply.code(statusOf(error.code)).send({ error: error.code, message: error.message, ...delivered });
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    return reply.code(400).send({ error: 'invalid_request', message: fastifyError.message });
  }
  const status = fastifyError.statusCode ?? 500;
  if (status === 413) {
    const limit = reply.request.routeOptions.bodyLimit;
    const message = `the request body is larger than this node's limit of ${limit} bytes (the node's bodyLimit); send fewer placements per request`;
    return reply.code(413).send({ error: 'payload_too_large', message });
  }
  if (status === 415) {
    const contentType = reply.request.headers['content-type'] ?? 'none';
    return reply.code(415).send({
      error: 'unsupported_media_type',
      message: `content type ${contentType} is not accepted: send application/json`,
    });
  }
  if (status === 400) {
    const code = fastifyError.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' ? 'bad_request' : 'malformed_json';
    return reply.code(400).send({ error: code, message: fastifyError.message });
  }
  if (status >= 400 && status < 500) {
    return reply
      .code(status)
      .send({ error: codeOf(status), message: fastifyError.message || (STATUS_CODES[status] ?? 'client error') });
  }
  reply.log.error({ err: error }, 'management request failed');
  return reply
    .code(status >= 500 && status < 600 ? status : 500)
    .send({ error: 'internal', message: 'internal error' });
}

/** Errors the router raises before any route runs: a path parameter too long (414) or an undecodable URL (400). */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void reply
      .code(414)
      .send({ error: 'uri_too_long', message: 'a path segment of the URL is longer than any route accepts' });
    return;
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    void reply.code(400).send({ error: 'bad_url', message: 'the URL is not validly percent-encoded' });
    return;
  }
  void sendError(reply, error);
}

/**
 * Errors of Node's HTTP parser, raised on the socket before a request exists: a request that did not
 * arrive within the headers or request timeout (408), headers over Node's size limit (431), anything else
 * unparsable (400). The connection is closed after the answer: its byte stream cannot be trusted any more.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, body] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, { error: 'request_timeout', message: 'the request did not arrive in time; the connection is closed' }]
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, { error: 'headers_too_large', message: 'the request headers exceed the size limit' }]
        : [400, { error: 'bad_request', message: 'the request is not valid HTTP/1.1' }];
  const text = JSON.stringify(body);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}

function codeOf(status: number): string {
  return (STATUS_CODES[status] ?? 'client error')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
}
