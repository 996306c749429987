// A typed HTTP client for the management API, used by the operator commands (and handy in scripts).
import type { PlacementEntry, RebalanceOutcome, ShardLocations, WrittenPlacement } from '../management/backend.js';

export interface MemberRow {
  readonly address: string;
  readonly status: string;
  readonly appVersion: string;
  readonly upNumber: number;
  readonly reachable: boolean;
  readonly roles: readonly string[];
}

export interface SetPlacementsResult {
  readonly placements: readonly WrittenPlacement[];
  readonly warnings: ReadonlyArray<{ readonly shardId: number; readonly target: string; readonly message: string }>;
}

/** The API answered with an error body (or not at all). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export class ManagementClient {
  private readonly base: string;

  constructor(
    url: string,
    private readonly options: { readonly token?: string; readonly timeoutMs?: number } = {},
  ) {
    this.base = url.replace(/\/+$/, '');
  }

  health(): Promise<{ status: string; self: string; memberStatus?: string }> {
    return this.request('GET', '/actor-ts/health');
  }

  members(): Promise<{ self: string; members: MemberRow[] }> {
    return this.request('GET', '/actor-ts/cluster/members');
  }

  shards(typeName: string): Promise<ShardLocations> {
    return this.request('GET', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}`);
  }

  placements(typeName: string): Promise<{ placements: WrittenPlacement[] }> {
    return this.request('GET', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/placements`);
  }

  setPlacements(typeName: string, placements: readonly PlacementEntry[]): Promise<SetPlacementsResult> {
    const body = placements.length === 1 ? placements[0] : { placements };
    return this.request('POST', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/placements`, body);
  }

  async removePlacement(typeName: string, shardId: number): Promise<void> {
    await this.request('DELETE', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/placements/${shardId}`);
  }

  rebalance(typeName: string, shardIds: readonly number[]): Promise<RebalanceOutcome> {
    return this.request('POST', `/actor-ts/cluster/shards/${encodeURIComponent(typeName)}/rebalance`, { shardIds });
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.token) headers['authorization'] = `Bearer ${this.options.token}`;
    let response: Response;
    try {
      response = await fetch(this.base + path, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ApiError(0, 'unreachable', `cannot reach ${this.base}: ${reason}`);
    }
    const text = await response.text();
    const parsed: unknown = text === '' ? undefined : safeJson(text);
    if (!response.ok) {
      const error = parsed as { error?: string; message?: string } | undefined;
      throw new ApiError(response.status, error?.error ?? 'http_error', error?.message ?? `${method} ${path} -> ${response.status}`);
    }
    return parsed as T;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { error: 'bad_response', message: text.slice(0, 200) };
  }
}
