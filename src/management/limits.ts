// The management HTTP server's settings: where it listens, and the connection and request limits that bound what
// a slow or hostile client can hold open, with their defaults (the one place they are defined: NodeConfig carries
// this object as its `http`, field for field, and the CLI's help quotes the defaults).
import { ActorTsError } from '../errors.js';

/**
 * The management HTTP server's settings: host and port, and the body size, timeouts and connections that keep
 * clients from holding a node's resources.
 */
export interface HttpConfig {
  /**
   * Host the server listens on; default '127.0.0.1', so the API is not exposed beyond this machine unless asked.
   * createManagementServer returns its server not yet listening: whoever listens (startNode) binds here.
   */
  readonly host: string;
  /** Port the server listens on (as `host`); default 8551 (0 picks a free one). */
  readonly port: number;
  /** Largest accepted request body in bytes; default 1 MiB. */
  readonly bodyLimit: number;
  /**
   * A request's headers must arrive within this long of its first byte, or it is answered 408 and closed;
   * default 10,000 ms, or requestTimeoutMs when that is shorter.
   */
  readonly headersTimeoutMs: number;
  /** The whole request (headers and body) must arrive within this long, or it is answered 408 and closed; default 30,000 ms. */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long; default 5,000 ms. */
  readonly keepAliveTimeoutMs: number;
  /**
   * Connections open at once; one more is closed as soon as it is accepted (unless its client is under its
   * share, `maxConnectionsPerClient`, and another client is over its own); default 128. Keeps a flood of
   * connections from using up the process's file descriptors, which the cluster transport needs too.
   */
  readonly maxConnections: number;
  /**
   * A client's (one remote address's) share of `maxConnections`; default 32, a quarter of the default cap.
   * Under the cap a client may hold any number. At the cap, a client holding fewer than its share still gets in:
   * the oldest connection of the client holding the most beyond its share is closed for it (connection-share.ts).
   * So one client holding slow requests, and reopening each one the server closes, cannot take every slot.
   * Not below `maxConnections`, it lets one client take them all.
   */
  readonly maxConnectionsPerClient: number;
}

/** The HTTP limits used when none are given. */
export const DEFAULT_HTTP_CONFIG: HttpConfig = Object.freeze({
  host: '127.0.0.1',
  port: 8551,
  bodyLimit: 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 128,
  maxConnectionsPerClient: 32,
});

// Host and port are judged by the listener (a port of 0 picks a free one); every other field is a limit.
const LISTEN_FIELDS: ReadonlySet<string> = new Set(['host', 'port']);

/** Fills in defaults and checks every limit; throws `invalid_argument` naming the bad one. */
export function resolveHttpLimits(input: Partial<HttpConfig> = {}): HttpConfig {
  const defined = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  // Checked as given, so the error names the setting the caller got wrong, not one derived from it.
  for (const [name, value] of Object.entries(defined)) {
    if (LISTEN_FIELDS.has(name)) continue;
    if (!Number.isSafeInteger(value) || (value as number) < 1) {
      throw new ActorTsError('invalid_argument', `${name} must be a positive integer, got ${String(value)}`);
    }
  }
  const requestTimeoutMs = input.requestTimeoutMs ?? DEFAULT_HTTP_CONFIG.requestTimeoutMs;
  const limits: HttpConfig = {
    ...DEFAULT_HTTP_CONFIG,
    headersTimeoutMs: Math.min(DEFAULT_HTTP_CONFIG.headersTimeoutMs, requestTimeoutMs),
    ...defined,
  };
  // Node refuses a headers timeout longer than the request timeout: the request timeout already covers it.
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ActorTsError(
      'invalid_argument',
      `headersTimeoutMs (${limits.headersTimeoutMs}) must not exceed requestTimeoutMs (${limits.requestTimeoutMs})`,
    );
  }
  return limits;
}

/**
 * How often Node looks for requests past their headers or request timeout. Its default (30 s) would let a
 * stalled request live up to 30 s past a shorter timeout; a quarter of the shortest timeout bounds the overshoot.
 */
export function connectionsCheckingIntervalMs(limits: HttpConfig): number {
  return Math.max(5, Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));
}
