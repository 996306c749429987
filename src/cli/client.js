/** The API answered with an error body (or not at all). */
export class ApiError extends Error {
    status;
    code;
    constructor(status, code, message) {
        super(message);
        this.status = status;
        this.code = code;
        this.name = 'ApiError';
    }
}
export const DEFAULT_CLIENT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** A typed client of a node's management HTTP API, as the CLI uses it; failures are ApiError with the server's code. */
export class ManagementClient {
    options;
    base;
    constructor(url, options = {}) {
        this.options = options;
        this.base = url.replace(/\/+$/, '');
    }
    health() {
        return this.request('GET', '/actor-ts/health');
    }
    members() {
        return this.request('GET', '/actor-ts/cluster/members');
    }
    shards(typeName) {
        return this.request('GET', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}`);
    }
    /** With includeExpired, expired pins too, each with `expired`. */
    placements(typeName, options = {}) {
        const query = options.includeExpired === true ? '?includeExpired=true' : '';
        return this.request('GET', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/placements${query}`);
    }
    setPlacements(typeName, placements) {
        const body = placements.length === 1 ? placements[0] : { placements };
        return this.request('POST', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/placements`, body);
    }
    async removePlacement(typeName, shardId, provenance = {}) {
        await this.request('DELETE', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/placements/${shardId}${query(provenance)}`);
    }
    rebalance(typeName, shardIds, provenance = {}) {
        return this.request('POST', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/rebalance`, { shardIds, ...provenance });
    }
    cordon(address, provenance = {}) {
        return this.request('POST', `${memberPath(address)}/cordon`, provenance);
    }
    async uncordon(address, provenance = {}) {
        await this.request('DELETE', `${memberPath(address)}/cordon${query(provenance)}`);
    }
    drain(address, provenance = {}) {
        return this.request('POST', `${memberPath(address)}/drain`, provenance);
    }
    /** The accepting node's audit trail, newest first. */
    audit() {
        return this.request('GET', '/actor-ts/audit');
    }
    explain(typeName, shardId) {
        return this.request('GET', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/explain/${shardId}`);
    }
    /** What setPlacements would start; nothing is written. */
    dryRunPlacements(typeName, placements) {
        const body = placements.length === 1 ? placements[0] : { placements };
        return this.request('POST', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/placements?dryRun=true`, body);
    }
    /** What rebalance would start; nothing is handed off. */
    dryRunRebalance(typeName, shardIds) {
        return this.request('POST', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/rebalance?dryRun=true`, { shardIds });
    }
    async request(method, path, body) {
        const headers = {};
        if (body !== undefined)
            headers['content-type'] = 'application/json';
        if (this.options.token)
            headers['authorization'] = `Bearer ${this.options.token}`;
        // One controller for the timeout and for giving up on an oversized answer, so either stops the transfer.
        const abort = new AbortController();
        const timer = setTimeout(() => abort.abort(new Error('timed out')), this.options.timeoutMs ?? DEFAULT_CLIENT_TIMEOUT_MS);
        let response;
        let text;
        try {
            try {
                response = await fetch(this.base + path, {
                    method,
                    headers,
                    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
                    signal: abort.signal,
                });
            }
            catch (error) {
                throw new ApiError(0, 'unreachable', `cannot reach ${this.base}: ${reasonOf(error, abort.signal)}`);
            }
            text = await readCapped(response, this.options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, abort, `${method} ${path}`);
        }
        finally {
            clearTimeout(timer);
        }
        const parsed = text === '' ? undefined : safeJson(text);
        if (!response.ok) {
            const error = parsed;
            throw new ApiError(response.status, error?.error ?? 'http_error', error?.message ?? `${method} ${path} -> ${response.status}`);
        }
        return parsed;
    }
}
function memberPath(address) {
    return `/actor-ts/cluster/members/${encodeURIComponent(address)}`;
}
function query(provenance) {
    const params = new URLSearchParams();
    if (provenance.by !== undefined)
        params.set('by', provenance.by);
    if (provenance.reason !== undefined)
        params.set('reason', provenance.reason);
    const text = params.toString();
    return text === '' ? '' : `?${text}`;
}
/**
 * Reads the body as UTF-8 text, at most `limit` bytes: a declared or actual length past it aborts the
 * transfer and throws `response_too_large`, so a huge or endless answer costs at most the limit in memory.
 */
async function readCapped(response, limit, abort, what) {
    const tooLarge = () => {
        abort.abort(new Error('response too large'));
        return new ApiError(response.status, 'response_too_large', `${what}: the answer is larger than ${limit} bytes; gave up reading it`);
    };
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > limit)
        throw tooLarge();
    if (response.body === null)
        return '';
    const reader = response.body.getReader();
    const chunks = [];
    let size = 0;
    try {
        for (;;) {
            const { done, value } = await reader.read();
            if (done)
                break;
            size += value.byteLength;
            if (size > limit)
                throw tooLarge();
            chunks.push(value);
        }
    }
    catch (error) {
        if (error instanceof ApiError)
            throw error;
        throw new ApiError(response.status, 'unreachable', `${what}: the answer broke off: ${reasonOf(error, abort.signal)}`);
    }
    finally {
        reader.releaseLock();
    }
    return Buffer.concat(chunks).toString('utf8');
}
function reasonOf(error, signal) {
    if (signal.aborted && signal.reason instanceof Error)
        return signal.reason.message;
    return error instanceof Error ? error.message : String(error);
}
function safeJson(text) {
    try {
        return JSON.parse(text);
    }
    catch {
        return { error: 'bad_response', message: text.slice(0, 200) };
    }
}
//# sourceMappingURL=client.js.map