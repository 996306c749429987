// Options of the TCP transport with their documented defaults, the validated settings the connections
// read, and the transport's counters.
import { ActorTsError } from '../errors.js';
import type { Logger } from '../logging.js';
import { DEFAULT_MAX_FRAME_BYTES } from './frame-codec.js';

export interface TcpBackoffOptions {
  /** Delay before the first reconnect attempt; default 100 ms. */
  readonly initialDelayMs?: number;
  /** Upper bound of the delay; default 5,000 ms. */
  readonly maxDelayMs?: number;
  /** Growth per consecutive failure; default 2. */
  readonly multiplier?: number;
  /**
   * How long a connection must stay open before its loss resets the backoff; default 5,000 ms. A peer that
   * completes the handshake and drops the connection sooner counts as a failure, so it is not redialled at
   * `initialDelayMs` forever. 0 resets on every completed handshake.
   */
  readonly resetAfterMs?: number;
}

export interface TcpTransportOptions {
  /** Actor system name, the `system` part of this node's address. */
  readonly system: string;
  /** Interface to listen on; default '127.0.0.1'. */
  readonly host?: string;
  /** Port to listen on; default 0 (an ephemeral port, read it back from `self`). */
  readonly port?: number;
  /** Host peers use to reach this node; default `host`. Required when `host` is a wildcard address. */
  readonly advertisedHost?: string;
  /** Shared cluster secret; when set, peers must prove they know it (HMAC-SHA256) or are refused. */
  readonly secret?: string | Uint8Array;
  /** Identifies this run of the node; default a random UUID. A restarted node gets a new one. */
  readonly incarnation?: string;
  /** Largest frame payload accepted or sent; default 16 MiB. */
  readonly maxFrameBytes?: number;
  /** Messages kept per peer while its connection is being (re)established; default 1,000. Overflow is dropped. */
  readonly maxQueuedMessages?: number;
  /**
   * Bytes an open connection may hold in its socket's write buffer (written, not yet taken by the OS); default
   * 32 MiB. A peer that stops reading would otherwise grow it without limit: further messages to it are dropped
   * (counted in `droppedBackpressure`) until it drains. A single frame is always accepted into an empty buffer,
   * so the buffer never holds more than max(maxBufferedBytes, one frame) plus what the connecting queue flushes.
   */
  readonly maxBufferedBytes?: number;
  /** Time allowed for connect + handshake; default 5,000 ms. */
  readonly handshakeTimeoutMs?: number;
  readonly backoff?: TcpBackoffOptions;
  /** Default: silent. */
  readonly logger?: Logger;
}

export interface TcpTransportStats {
  /** Messages written to an open connection (or handed to local listeners when sent to self). */
  readonly sent: number;
  /** Messages handed to listeners. */
  readonly delivered: number;
  /** Incoming messages that did not pass `parseMessage`: dropped. */
  readonly malformed: number;
  /** Oversized, corrupt or wrong-version frames: the connection was closed. */
  readonly frameErrors: number;
  /** Handshakes refused, by us or by the peer (wrong secret, wrong address, protocol violation, timeout). */
  readonly handshakeFailures: number;
  /** Outgoing messages dropped because a peer's queue was full while connecting. */
  readonly droppedQueueFull: number;
  /** Outgoing messages dropped because an open connection's write buffer was full (the peer reads too slowly). */
  readonly droppedBackpressure: number;
  /** Outgoing messages that could not be encoded or exceeded the frame size. */
  readonly droppedUnencodable: number;
  /** Exceptions thrown by message listeners (caught and logged). */
  readonly listenerErrors: number;
  /** Outbound connections that completed the handshake. */
  readonly connections: number;
  /** Open outbound connections that closed (the peer went away or the network broke). */
  readonly connectionsLost: number;
  /** Outbound attempts that failed before completing the handshake (each is followed by a backoff). */
  readonly connectFailures: number;
}

export type MutableTcpStats = { -readonly [K in keyof TcpTransportStats]: TcpTransportStats[K] };

export interface TcpSettings {
  readonly secret: Buffer | undefined;
  readonly maxFrameBytes: number;
  readonly maxQueuedMessages: number;
  readonly maxBufferedBytes: number;
  readonly handshakeTimeoutMs: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly multiplier: number;
  readonly resetAfterMs: number;
}

/**
 * Idle time before the OS probes a connection. Keep-alive is what eventually ends a connection to a host that
 * vanished without a FIN or RST (power loss, a dropped route), which would otherwise stay open forever.
 */
export const KEEPALIVE_DELAY_MS = 15_000;

/** Applies defaults and validates; throws `invalid_argument` naming the bad option. */
export function resolveTcpSettings(options: TcpTransportOptions): TcpSettings {
  const positive = (name: string, value: number | undefined, fallback: number, min = 1): number => {
    const v = value ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
      throw new ActorTsError('invalid_argument', `${name} must be a finite number >= ${min}, got ${String(v)}`);
    }
    return v;
  };
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ActorTsError('invalid_argument', `port must be an integer in 0..65535, got ${String(port)}`);
  }
  const secret = options.secret === undefined ? undefined : Buffer.from(options.secret);
  if (secret !== undefined && secret.byteLength === 0) throw new ActorTsError('invalid_argument', 'secret must not be empty');
  const initialDelayMs = positive('backoff.initialDelayMs', options.backoff?.initialDelayMs, 100);
  const maxDelayMs = positive('backoff.maxDelayMs', options.backoff?.maxDelayMs, 5_000);
  if (maxDelayMs < initialDelayMs) throw new ActorTsError('invalid_argument', 'backoff.maxDelayMs must be >= initialDelayMs');
  return {
    secret,
    maxFrameBytes: Math.floor(positive('maxFrameBytes', options.maxFrameBytes, DEFAULT_MAX_FRAME_BYTES, 64)),
    maxQueuedMessages: Math.floor(positive('maxQueuedMessages', options.maxQueuedMessages, 1_000)),
    maxBufferedBytes: Math.floor(positive('maxBufferedBytes', options.maxBufferedBytes, 32 * 1024 * 1024)),
    handshakeTimeoutMs: positive('handshakeTimeoutMs', options.handshakeTimeoutMs, 5_000),
    initialDelayMs,
    maxDelayMs,
    multiplier: positive('backoff.multiplier', options.backoff?.multiplier, 2),
    resetAfterMs: positive('backoff.resetAfterMs', options.backoff?.resetAfterMs, 5_000, 0),
  };
}
