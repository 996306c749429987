// A typed HTTP client for the management API, used by the operator commands (and handy in scripts).
import { Agent, fetch, type Response } from 'undici';
import { CodedError } from '../../crdt/index.js';
import type {
  AuditAnswer,
  CordonAnswer,
  DrainAnswer,
  ExplainAnswer,
  HealthAnswer,
  MemberJson,
  MembersAnswer,
  PinRequestBody,
  PinsWritten,
  PlacementsAnswer,
  PlacementsDryRunAnswer,
  RebalanceAnswer,
  RebalanceDryRun,
  SetPlacementsBody,
  ShardLocationsAnswer,
} from '../management/api-shapes.js';

/** Who asks and why, sent with every write so the accepting node's audit trail names them. */
export interface Provenance {
  readonly by?: string;
  readonly reason?: string;
}

/** One member as the API lists it. */
export type MemberRow = MemberJson;

/** What a pin write answers: the pins as written and the warnings about targets no member can take now. */
export type SetPlacementsResult = PinsWritten;

/** The API answered with an error body (or not at all). */
export class ApiError extends CodedError<string> {
  constructor(
    readonly status: number,
    code: string,
    message: string,
  ) {
    super(code, message);
    this.name = 'ApiError';
  }
}

export interface ManagementClientOptions {
  readonly token?: string;
  /** Bound on one request, answer included; default 10,000 ms. */
  readonly timeoutMs?: number;
  /** Largest answer body read; past it the request is aborted with `response_too_large`; default 16 MiB. */
  readonly maxResponseBytes?: number;
  /** PEM certificates of the authorities an https:// node's certificate must chain to; default the system's. */
  readonly ca?: string;
}

export const DEFAULT_CLIENT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** A typed client of a node's management HTTP API, as the CLI uses it; failures are ApiError with the server's code. */
export class ManagementClient {
  private readonly base: string;
  /** Connections that trust `ca` (undici's Agent: Node's own fetch takes no CA); undefined: the default ones. */
  private readonly dispatcher: Agent | undefined;

  constructor(
    url: string,
    private readonly options: ManagementClientOptions = {},
  ) {
    this.base = url.replace(/\/+$/, '');
    this.dispatcher = options.ca === undefined ? undefined : new Agent({ connect: { ca: options.ca } });
  }

  health(): Promise<HealthAnswer> {
    return this.request('GET', '/actor-ts/health');
  }

  members(): Promise<MembersAnswer> {
    return this.request('GET', '/actor-ts/cluster/members');
  }

  shards(typeName: string): Promise<ShardLocationsAnswer> {
    return this.request('GET', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}`);
  }

  /** With includeExpired, expired pins too, each with `expired`. */
  placements(typeName: string, options: { readonly includeExpired?: boolean } = {}): Promise<PlacementsAnswer> {
    const query = options.includeExpired === true ? '?includeExpired=true' : '';
    return this.request('GET', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/placements${query}`);
  }

  /** With allowUnknownTarget, pins to targets no current member matches are written (else 409 unknown_target). */
  setPlacements(
    typeName: string,
    placements: readonly PinRequestBody[],
    options: { readonly allowUnknownTarget?: boolean } = {},
  ): Promise<SetPlacementsResult> {
    return this.request(
      'POST',
      `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/placements`,
      placementsBody(placements, options),
    );
  }

  async removePlacement(typeName: string, shardId: number, provenance: Provenance = {}): Promise<void> {
    await this.request(
      'DELETE',
      `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/placements/${shardId}${query(provenance)}`,
    );
  }

  rebalance(typeName: string, shardIds: readonly number[], provenance: Provenance = {}): Promise<RebalanceAnswer> {
    return this.request('POST', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/rebalance`, {
      shardIds,
      ...provenance,
    });
  }

  cordon(address: string, provenance: Provenance = {}): Promise<CordonAnswer> {
    return this.request('POST', `${memberPath(address)}/cordon`, provenance);
  }

  async uncordon(address: string, provenance: Provenance = {}): Promise<void> {
    await this.request('DELETE', `${memberPath(address)}/cordon${query(provenance)}`);
  }

  drain(address: string, provenance: Provenance = {}): Promise<DrainAnswer> {
    return this.request('POST', `${memberPath(address)}/drain`, provenance);
  }

  /** The accepting node's audit trail, newest first. */
  audit(): Promise<AuditAnswer> {
    return this.request('GET', '/actor-ts/audit');
  }

  explain(typeName: string, shardId: number): Promise<ExplainAnswer> {
    return this.request('GET', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/explain/${shardId}`);
  }

  /** What setPlacements would start; nothing is written. */
  dryRunPlacements(
    typeName: string,
    placements: readonly PinRequestBody[],
    options: { readonly allowUnknownTarget?: boolean } = {},
  ): Promise<PlacementsDryRunAnswer> {
    return this.request(
      'POST',
      `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/placements?dryRun=true`,
      placementsBody(placements, options),
    );
  }

  /** What rebalance would start; nothing is handed off. */
  dryRunRebalance(typeName: string, shardIds: readonly number[]): Promise<RebalanceDryRun> {
    return this.request('POST', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/rebalance?dryRun=true`, {
      shardIds,
    });
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.token) headers['authorization'] = `Bearer ${this.options.token}`;
    // One controller for the timeout and for giving up on an oversized answer, so either stops the transfer.
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new Error('timed out')),
      this.options.timeoutMs ?? DEFAULT_CLIENT_TIMEOUT_MS,
    );
    let response: Response;
    let text: string;
    try {
      try {
        response = await fetch(this.base + path, {
          method,
          headers,
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: abort.signal,
          ...(this.dispatcher === undefined ? {} : { dispatcher: this.dispatcher }),
        });
      } catch (error) {
        throw new ApiError(0, 'unreachable', `cannot reach ${this.base}: ${reasonOf(error, abort.signal)}`);
      }
      text = await readCapped(
        response,
        this.options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
        abort,
        `${method} ${path}`,
      );
    } finally {
      clearTimeout(timer);
    }
    const parsed: unknown = text === '' ? undefined : safeJson(text);
    if (!response.ok) {
      const error = parsed as { error?: string; message?: string } | undefined;
      throw new ApiError(
        response.status,
        error?.error ?? 'http_error',
        error?.message ?? `${method} ${path} -> ${response.status}`,
      );
    }
    return parsed as T;
  }
}

function placementsBody(
  placements: readonly PinRequestBody[],
  options: { readonly allowUnknownTarget?: boolean },
): SetPlacementsBody {
  const allow = options.allowUnknownTarget === true ? { allowUnknownTarget: true } : {};
  const [only] = placements;
  return placements.length === 1 && only !== undefined ? { ...only, ...allow } : { placements, ...allow };
}

function memberPath(address: string): string {
  return `/actor-ts/cluster/members/${encodeURIComponent(address)}`;
}

function query(provenance: Provenance): string {
  const params = new URLSearchParams();
  if (provenance.by !== undefined) params.set('by', provenance.by);
  if (provenance.reason !== undefined) params.set('reason', provenance.reason);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * Reads the body as UTF-8 text, at most `limit` bytes: a declared or actual length past it aborts the
 * transfer and throws `response_too_large`, so a huge or endless answer costs at most the limit in memory.
 */
async function readCapped(response: Response, limit: number, abort: AbortController, what: string): Promise<string> {
  const tooLarge = (): ApiError => {
    abort.abort(new Error('response too large'));
    return new ApiError(
      response.status,
      'response_too_large',
      `${what}: the answer is larger than ${limit} bytes; gave up reading it`,
    );
  };
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > limit) throw tooLarge();
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) throw tooLarge();
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError(
      response.status,
      'unreachable',
      `${what}: the answer broke off: ${reasonOf(error, abort.signal)}`,
    );
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks).toString('utf8');
}

function reasonOf(error: unknown, signal: AbortSignal): string {
  if (signal.aborted && signal.reason instanceof Error) return signal.reason.message;
  if (!(error instanceof Error)) return String(error);
  // fetch says only "fetch failed"; why (refused, a certificate not trusted) is in its cause.
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { error: 'bad_response', message: text.slice(0, 200) };
  }
}
