// Options of the TCP transport with their documented defaults, the validated settings the connections
// read, and the transport's counters.
import type { ClusterTls } from './tcp-tls.js';
import { ActorTsError } from '../../errors.js';
import type { Logger } from '../../logging.js';
import { DEFAULT_MAX_FRAME_BYTES, FRAME_HEADER_BYTES } from './frame-codec.js';
import { DEFAULT_DECODE_LIMITS, type DecodeConfig } from './msgpack-scan.js';
import { packageRelease } from './release.js';
import { PROTOCOL_RANGE, isProtocolRange, type ProtocolRange } from './protocol-versions.js';

export interface TcpBackoffConfig {
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

/** Options of `TcpTransport.start`: this node's address, the shared secret, and the frame and connection limits. */
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
  /**
   * Mutual TLS 1.3 on every connection, both directions: each side's certificate must chain to the authority in the
   * material (tcp-tls.ts). Read for each new connection, so a caller that follows the files on disk swaps it by
   * calling `TcpTransport.useTls` too. Default none: plain TCP.
   */
  readonly tls?: ClusterTls;
  /** Identifies this run of the node; default a random UUID. A restarted node gets a new one. */
  readonly incarnation?: string;
  /** Largest frame payload accepted or sent; default 16 MiB. */
  readonly maxFrameBytes?: number;
  /**
   * Largest frame accepted before the peer has completed the handshake (handshake frames are a few hundred
   * bytes); default 4 KiB. An unauthenticated peer cannot make us buffer or decode more than this per frame.
   */
  readonly maxHandshakeFrameBytes?: number;
  /**
   * Time an authenticated peer has to complete a frame once its first byte arrived; default 30,000 ms (16 MiB
   * at ~4.5 Mbit/s). A peer that stops mid-frame is disconnected instead of holding the partial frame forever.
   */
  readonly frameTimeoutMs?: number;
  /** Bytes one inbound connection may hold in an incomplete frame; default maxFrameBytes + the 6-byte header. */
  readonly maxInboundBytesPerConnection?: number;
  /**
   * Bytes all inbound connections together may hold in incomplete frames; default 64 MiB. A connection whose
   * data would exceed it is closed (its peer redials), so many slow or stalled peers cannot exhaust memory;
   * unless it is a trusted peer's (see `TcpTransport.trustPeers`): then untrusted connections holding the
   * room it needs are closed instead (inbound-budget.ts).
   */
  readonly maxInboundBufferedBytes?: number;
  /** Budgets one received message must fit in before it is decoded (see DecodeConfig for the defaults). */
  readonly decodeLimits?: Partial<DecodeConfig>;
  /**
   * Interval of the aggregated logging of what remote peers cause (refused handshakes, bad frames, malformed
   * messages): one line per kind and peer host per interval, with the count of the events it stands for;
   * default 10,000 ms.
   */
  readonly peerLogIntervalMs?: number;
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
  /**
   * A connection or dial younger than this is kept when the owner asks to replace a stalled one
   * (`reconnect`): it has not had the time to prove itself stalled; default 500 ms.
   */
  readonly redialMinAgeMs?: number;
  readonly handshakeTimeoutMs?: number;
  readonly backoff?: TcpBackoffConfig;
  /**
   * The protocol versions this node speaks; default `PROTOCOL_RANGE`. Only tests set it, to fake a node of
   * another release (the CLI reads ACTOR_TS_PROTOCOL_RANGE for that).
   */
  readonly protocolRange?: ProtocolRange;
  /** The release this node announces in its handshake; default this package's version. */
  readonly release?: string;
  /** Default: silent. */
  readonly logger?: Logger;
}

/** Counters of a TCP transport: messages and bytes, connections, and frames refused at the boundary. */
export interface TcpTransportStats {
  /** Messages written to an open connection (or handed to local listeners when sent to self). */
  readonly sent: number;
  /** Messages handed to listeners. */
  readonly delivered: number;
  /** Incoming messages that did not pass `parseMessage`: dropped. */
  readonly malformed: number;
  /** Oversized, corrupt or wrong-version frames: the connection was closed. */
  readonly frameErrors: number;
  /** Inbound connections closed because a frame did not complete within `frameTimeoutMs`. */
  readonly frameTimeouts: number;
  /** Inbound connections closed because they exceeded the per-connection or the total inbound buffer budget. */
  readonly inboundOverBudget: number;
  /**
   * Inbound connections of untrusted peers closed for the budget's sake: their share went to a trusted peer's
   * frame, or they completed a large frame that was no valid message. Rising means strangers hold the budget.
   */
  readonly peersDisconnectedForBudget: number;
  /**
   * Frames of trusted peers (members) refused because the budget was full of other trusted peers' frames: those
   * messages were lost. Should stay 0; rising means the node cannot take its members' traffic.
   */
  readonly inboundStarved: number;
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
  /** Probes of a peer's address (`probe`): bare connects asking whether its process still listens. */
  readonly probes: number;
  /** Open outbound connections that closed (the peer went away or the network broke). */
  readonly connectionsLost: number;
  /** Outbound attempts that failed before completing the handshake (each is followed by a backoff). */
  readonly connectFailures: number;
  /** Connections or dials dropped and redialled because the owner reported the peer silent (`reconnect`). */
  readonly redials: number;
  /** Connections refused, by us or by the peer, because the two ranges of protocol versions do not meet. */
  readonly refusedProtocolVersion: number;
  /** Messages not sent because the peer's agreed protocol version does not have their type yet. */
  readonly droppedUnsupported: number;
}

/** What a transport holds at one moment (TcpTransport.usage()); everything is 0 once its connections ended. */
export interface TcpTransportUsage {
  /** Connections not yet ended, by direction and state. */
  readonly connections: {
    readonly 'inbound-handshaking': number;
    readonly 'inbound-open': number;
    readonly 'outbound-connecting': number;
    readonly 'outbound-open': number;
  };
  /** Bytes of incomplete inbound frames held in the shared budget. */
  readonly inboundBufferedBytes: number;
  /** Connections holding a share of that budget. */
  readonly budgetHolders: number;
  /** Sockets tracked for close(). */
  readonly sockets: number;
  /** Open inbound connections registered by peer address. */
  readonly inboundByPeer: number;
  /** Peers whose announced incarnation is remembered (those with an inbound connection or that we send to). */
  readonly peerIncarnations: number;
}

export type MutableTcpStats = { -readonly [K in keyof TcpTransportStats]: TcpTransportStats[K] };

export interface TcpConfig {
  readonly secret: Buffer | undefined;
  readonly maxFrameBytes: number;
  readonly maxHandshakeFrameBytes: number;
  readonly frameTimeoutMs: number;
  readonly maxInboundBytesPerConnection: number;
  readonly maxInboundBufferedBytes: number;
  readonly decodeLimits: DecodeConfig;
  readonly peerLogIntervalMs: number;
  readonly maxQueuedMessages: number;
  readonly maxBufferedBytes: number;
  readonly handshakeTimeoutMs: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly multiplier: number;
  readonly resetAfterMs: number;
  readonly redialMinAgeMs: number;
  readonly protocolRange: ProtocolRange;
  readonly release: string;
}

/**
 * Idle time before the OS probes a connection. Keep-alive is what eventually ends a connection to a host that
 * vanished without a FIN or RST (power loss, a dropped route), which would otherwise stay open forever.
 */
export const KEEPALIVE_DELAY_MS = 15_000;

/** Applies defaults and validates; throws `invalid_argument` naming the bad option. */
export function resolveTcpSettings(options: TcpTransportOptions): TcpConfig {
  const positive = (name: string, value: number | undefined, fallback: number, min = 1): number => {
    const v = value ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
      throw new ActorTsError('invalid_argument', `${name} must be a finite number >= ${min}, got ${String(v)}`);
    }
    return v;
  };
  const protocolRange = options.protocolRange ?? PROTOCOL_RANGE;
  if (!isProtocolRange(protocolRange)) {
    throw new ActorTsError('invalid_argument', 'protocolRange must be integers 1 <= min <= max <= 255');
  }
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ActorTsError('invalid_argument', `port must be an integer in 0..65535, got ${String(port)}`);
  }
  const secret = options.secret === undefined ? undefined : Buffer.from(options.secret);
  if (secret !== undefined && secret.byteLength === 0)
    throw new ActorTsError('invalid_argument', 'secret must not be empty');
  const initialDelayMs = positive('backoff.initialDelayMs', options.backoff?.initialDelayMs, 100);
  const maxDelayMs = positive('backoff.maxDelayMs', options.backoff?.maxDelayMs, 5_000);
  if (maxDelayMs < initialDelayMs)
    throw new ActorTsError('invalid_argument', 'backoff.maxDelayMs must be >= initialDelayMs');
  const maxFrameBytes = Math.floor(positive('maxFrameBytes', options.maxFrameBytes, DEFAULT_MAX_FRAME_BYTES, 64));
  const limits = options.decodeLimits ?? {};
  const decodeLimits: DecodeConfig = {
    maxDepth: Math.floor(positive('decodeLimits.maxDepth', limits.maxDepth, DEFAULT_DECODE_LIMITS.maxDepth)),
    maxElements: Math.floor(
      positive('decodeLimits.maxElements', limits.maxElements, DEFAULT_DECODE_LIMITS.maxElements),
    ),
    maxStringBytes: Math.floor(
      positive('decodeLimits.maxStringBytes', limits.maxStringBytes, DEFAULT_DECODE_LIMITS.maxStringBytes),
    ),
    maxBinaryBytes: Math.floor(positive('decodeLimits.maxBinaryBytes', limits.maxBinaryBytes, maxFrameBytes)),
  };
  return {
    secret,
    maxFrameBytes,
    // Handshake frames are ~100-300 bytes; 64 is the smallest useful bound.
    maxHandshakeFrameBytes: Math.floor(
      positive('maxHandshakeFrameBytes', options.maxHandshakeFrameBytes, 4 * 1024, 64),
    ),
    frameTimeoutMs: positive('frameTimeoutMs', options.frameTimeoutMs, 30_000),
    maxInboundBytesPerConnection: Math.floor(
      positive(
        'maxInboundBytesPerConnection',
        options.maxInboundBytesPerConnection,
        maxFrameBytes + FRAME_HEADER_BYTES,
        FRAME_HEADER_BYTES,
      ),
    ),
    maxInboundBufferedBytes: Math.floor(
      positive('maxInboundBufferedBytes', options.maxInboundBufferedBytes, 64 * 1024 * 1024, FRAME_HEADER_BYTES),
    ),
    decodeLimits,
    peerLogIntervalMs: positive('peerLogIntervalMs', options.peerLogIntervalMs, 10_000),
    maxQueuedMessages: Math.floor(positive('maxQueuedMessages', options.maxQueuedMessages, 1_000)),
    maxBufferedBytes: Math.floor(positive('maxBufferedBytes', options.maxBufferedBytes, 32 * 1024 * 1024)),
    handshakeTimeoutMs: positive('handshakeTimeoutMs', options.handshakeTimeoutMs, 5_000),
    initialDelayMs,
    maxDelayMs,
    multiplier: positive('backoff.multiplier', options.backoff?.multiplier, 2),
    resetAfterMs: positive('backoff.resetAfterMs', options.backoff?.resetAfterMs, 5_000, 0),
    redialMinAgeMs: positive('redialMinAgeMs', options.redialMinAgeMs, 500, 0),
    protocolRange,
    release: options.release ?? packageRelease(),
  };
}
