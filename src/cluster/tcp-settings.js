// Options of the TCP transport with their documented defaults, the validated settings the connections
// read, and the transport's counters.
import { ActorTsError } from '../errors.js';
import { DEFAULT_MAX_FRAME_BYTES, FRAME_HEADER_BYTES } from './frame-codec.js';
import { DEFAULT_DECODE_LIMITS } from './msgpack-scan.js';
/**
 * Idle time before the OS probes a connection. Keep-alive is what eventually ends a connection to a host that
 * vanished without a FIN or RST (power loss, a dropped route), which would otherwise stay open forever.
 */
export const KEEPALIVE_DELAY_MS = 15_000;
/** Applies defaults and validates; throws `invalid_argument` naming the bad option. */
export function resolveTcpSettings(options) {
    const positive = (name, value, fallback, min = 1) => {
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
    if (secret !== undefined && secret.byteLength === 0)
        throw new ActorTsError('invalid_argument', 'secret must not be empty');
    const initialDelayMs = positive('backoff.initialDelayMs', options.backoff?.initialDelayMs, 100);
    const maxDelayMs = positive('backoff.maxDelayMs', options.backoff?.maxDelayMs, 5_000);
    if (maxDelayMs < initialDelayMs)
        throw new ActorTsError('invalid_argument', 'backoff.maxDelayMs must be >= initialDelayMs');
    const maxFrameBytes = Math.floor(positive('maxFrameBytes', options.maxFrameBytes, DEFAULT_MAX_FRAME_BYTES, 64));
    const limits = options.decodeLimits ?? {};
    const decodeLimits = {
        maxDepth: Math.floor(positive('decodeLimits.maxDepth', limits.maxDepth, DEFAULT_DECODE_LIMITS.maxDepth)),
        maxElements: Math.floor(positive('decodeLimits.maxElements', limits.maxElements, DEFAULT_DECODE_LIMITS.maxElements)),
        maxStringBytes: Math.floor(positive('decodeLimits.maxStringBytes', limits.maxStringBytes, DEFAULT_DECODE_LIMITS.maxStringBytes)),
        maxBinaryBytes: Math.floor(positive('decodeLimits.maxBinaryBytes', limits.maxBinaryBytes, maxFrameBytes)),
    };
    return {
        secret,
        maxFrameBytes,
        // Handshake frames are ~100-300 bytes; 64 is the smallest useful bound.
        maxHandshakeFrameBytes: Math.floor(positive('maxHandshakeFrameBytes', options.maxHandshakeFrameBytes, 4 * 1024, 64)),
        frameTimeoutMs: positive('frameTimeoutMs', options.frameTimeoutMs, 30_000),
        maxInboundBytesPerConnection: Math.floor(positive('maxInboundBytesPerConnection', options.maxInboundBytesPerConnection, maxFrameBytes + FRAME_HEADER_BYTES, FRAME_HEADER_BYTES)),
        maxInboundBufferedBytes: Math.floor(positive('maxInboundBufferedBytes', options.maxInboundBufferedBytes, 64 * 1024 * 1024, FRAME_HEADER_BYTES)),
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
    };
}
//# sourceMappingURL=tcp-settings.js.map