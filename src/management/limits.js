// Connection and request limits of the management HTTP server, with their defaults (the one place they are
// defined; NodeConfig and the CLI refer to them). They bound what a slow or hostile client can hold open.
import { ActorTsError } from '../errors.js';
/** The HTTP limits used when none are given. */
export const DEFAULT_HTTP_CONFIG = Object.freeze({
    bodyLimit: 1024 * 1024,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
    maxConnections: 128,
    maxConnectionsPerClient: 32,
});
/** Fills in defaults and checks every limit; throws `invalid_argument` naming the bad one. */
export function resolveHttpLimits(input = {}) {
    const defined = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
    // Checked as given, so the error names the setting the caller got wrong, not one derived from it.
    for (const [name, value] of Object.entries(defined)) {
        if (!Number.isSafeInteger(value) || value < 1) {
            throw new ActorTsError('invalid_argument', `${name} must be a positive integer, got ${String(value)}`);
        }
    }
    const requestTimeoutMs = input.requestTimeoutMs ?? DEFAULT_HTTP_CONFIG.requestTimeoutMs;
    const limits = {
        ...DEFAULT_HTTP_CONFIG,
        headersTimeoutMs: Math.min(DEFAULT_HTTP_CONFIG.headersTimeoutMs, requestTimeoutMs),
        ...defined,
    };
    // Node refuses a headers timeout longer than the request timeout: the request timeout already covers it.
    if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
        throw new ActorTsError('invalid_argument', `headersTimeoutMs (${limits.headersTimeoutMs}) must not exceed requestTimeoutMs (${limits.requestTimeoutMs})`);
    }
    return limits;
}
/**
 * How often Node looks for requests past their headers or request timeout. Its default (30 s) would let a
 * stalled request live up to 30 s past a shorter timeout; a quarter of the shortest timeout bounds the overshoot.
 */
export function connectionsCheckingIntervalMs(limits) {
    return Math.max(5, Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));
}
//# sourceMappingURL=limits.js.map