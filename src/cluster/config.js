// Cluster membership settings: one typed object, every field optional on input with a documented default.
// `resolveClusterConfig` validates once at construction so the running cluster never sees a bad value.
import { ActorTsError } from '../errors.js';
import { NodeAddress } from './address.js';
import { attributesProblem, normalizeAttributes } from './attributes.js';
/** The failure detector settings used when none are given. */
export const DEFAULT_FAILURE_DETECTOR_CONFIG = {
    threshold: 8,
    maxSampleSize: 1_000,
    minStdDeviationMs: 100,
    acceptableHeartbeatPauseMs: 3_000,
    firstHeartbeatEstimateMs: 1_000,
};
/** The cluster settings every field of ClusterConfigInput defaults to. */
export const DEFAULT_CLUSTER_CONFIG = {
    seedNodes: [],
    appVersion: '1.0.0',
    roles: [],
    attributes: {},
    heartbeatIntervalMs: 1_000,
    monitoredByNrOfMembers: 9,
    failureDetector: DEFAULT_FAILURE_DETECTOR_CONFIG,
    gossipIntervalMs: 1_000,
    seedNodeTimeoutMs: 5_000,
    retryJoinIntervalMs: 1_000,
    downAfterMs: 10_000,
    leaveTimeoutMs: 20_000,
    exitTimeoutMs: 10_000,
    weaklyUpAfterMs: 7_000,
    removedRetentionMs: 60_000,
    tombstoneTtlMs: 86_400_000,
};
/** Applies defaults and validates; throws `invalid_argument` (or `invalid_address`) naming the bad field. */
export function resolveClusterConfig(input = {}) {
    const d = DEFAULT_CLUSTER_CONFIG;
    const seedNodes = (input.seedNodes ?? d.seedNodes).map((s) => (typeof s === 'string' ? NodeAddress.parse(s) : s));
    const appVersion = input.appVersion ?? d.appVersion;
    if (typeof appVersion !== 'string' || appVersion.length === 0 || appVersion.length > 64) {
        throw bad('appVersion must be a non-empty string of at most 64 characters');
    }
    const roles = [...(input.roles ?? d.roles)];
    for (const role of roles) {
        if (typeof role !== 'string' || role.length === 0 || role.length > 64)
            throw bad(`invalid role ${JSON.stringify(role)}`);
    }
    const attributesInput = input.attributes ?? d.attributes;
    const attributesError = attributesProblem(attributesInput);
    if (attributesError !== undefined)
        throw bad(attributesError);
    const attributes = normalizeAttributes(attributesInput);
    const fdInput = input.failureDetector ?? {};
    const fd = {
        threshold: positive('failureDetector.threshold', fdInput.threshold ?? DEFAULT_FAILURE_DETECTOR_CONFIG.threshold),
        maxSampleSize: integer('failureDetector.maxSampleSize', fdInput.maxSampleSize ?? DEFAULT_FAILURE_DETECTOR_CONFIG.maxSampleSize, 1),
        minStdDeviationMs: positive('failureDetector.minStdDeviationMs', fdInput.minStdDeviationMs ?? DEFAULT_FAILURE_DETECTOR_CONFIG.minStdDeviationMs),
        acceptableHeartbeatPauseMs: nonNegative('failureDetector.acceptableHeartbeatPauseMs', fdInput.acceptableHeartbeatPauseMs ?? DEFAULT_FAILURE_DETECTOR_CONFIG.acceptableHeartbeatPauseMs),
        firstHeartbeatEstimateMs: positive('failureDetector.firstHeartbeatEstimateMs', fdInput.firstHeartbeatEstimateMs ?? DEFAULT_FAILURE_DETECTOR_CONFIG.firstHeartbeatEstimateMs),
    };
    const downAfterMs = positive('downAfterMs', input.downAfterMs ?? d.downAfterMs);
    const stableAfterMs = positive('stableAfterMs', input.stableAfterMs ?? downAfterMs);
    const minorityDownAfterMs = positive('minorityDownAfterMs', input.minorityDownAfterMs ?? Math.round(stableAfterMs * 0.75));
    if (minorityDownAfterMs > stableAfterMs)
        throw bad('minorityDownAfterMs must not exceed stableAfterMs');
    return {
        seedNodes,
        appVersion,
        roles,
        attributes,
        heartbeatIntervalMs: positive('heartbeatIntervalMs', input.heartbeatIntervalMs ?? d.heartbeatIntervalMs),
        monitoredByNrOfMembers: integer('monitoredByNrOfMembers', input.monitoredByNrOfMembers ?? d.monitoredByNrOfMembers, 1),
        failureDetector: fd,
        gossipIntervalMs: positive('gossipIntervalMs', input.gossipIntervalMs ?? d.gossipIntervalMs),
        seedNodeTimeoutMs: positive('seedNodeTimeoutMs', input.seedNodeTimeoutMs ?? d.seedNodeTimeoutMs),
        retryJoinIntervalMs: positive('retryJoinIntervalMs', input.retryJoinIntervalMs ?? d.retryJoinIntervalMs),
        downAfterMs,
        stableAfterMs,
        minorityDownAfterMs,
        leaveTimeoutMs: positive('leaveTimeoutMs', input.leaveTimeoutMs ?? d.leaveTimeoutMs),
        exitTimeoutMs: positive('exitTimeoutMs', input.exitTimeoutMs ?? d.exitTimeoutMs),
        weaklyUpAfterMs: nonNegative('weaklyUpAfterMs', input.weaklyUpAfterMs ?? d.weaklyUpAfterMs),
        removedRetentionMs: positive('removedRetentionMs', input.removedRetentionMs ?? d.removedRetentionMs),
        tombstoneTtlMs: positive('tombstoneTtlMs', input.tombstoneTtlMs ?? d.tombstoneTtlMs),
    };
}
function positive(name, value) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
        throw bad(`${name} must be a finite number > 0, got ${String(value)}`);
    return value;
}
function nonNegative(name, value) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
        throw bad(`${name} must be a finite number >= 0, got ${String(value)}`);
    return value;
}
function integer(name, value, min) {
    if (!Number.isInteger(value) || value < min)
        throw bad(`${name} must be an integer >= ${min}, got ${String(value)}`);
    return value;
}
function bad(message) {
    return new ActorTsError('invalid_argument', `invalid cluster config: ${message}`);
}
//# sourceMappingURL=config.js.map