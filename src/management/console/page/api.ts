// Browser side of the console: the management API's routes, called the way the CLI calls them (JSON bodies,
// `Authorization: Bearer` when a token was given). The token lives in sessionStorage, for this tab only.
/// <reference lib="dom" />
import type {
  AuditAnswer,
  AuditEntryJson,
  ExplainAnswer,
  HealthAnswer,
  MembersAnswer,
  PinRequestBody,
  PinsWritten,
  PlacementsAnswer,
  PlacementsDryRunAnswer,
  RebalanceAnswer,
  ShardLocationsAnswer,
} from '../../api-shapes.js';

export type { AuditEntryJson, ExplainAnswer, PinRequestBody };

/** Who asks for a member action and why: recorded in the audit (the CLI sends the same). */
export interface Provenance {
  readonly by: string;
  readonly reason: string;
}

export const API = '/actor-ts';
const TOKEN_KEY = 'actor-ts-console-token';

/** A non-2xx answer, with the API's `{ error, message }` when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value: string): void {
  sessionStorage.setItem(TOKEN_KEY, value);
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T | undefined> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const bearer = token();
  if (bearer !== null) headers['authorization'] = `Bearer ${bearer}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? null : JSON.stringify(body),
    cache: 'no-store',
  });
  if (response.status === 204) return undefined;
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const error = json as { error?: unknown; message?: unknown } | undefined;
    throw new ApiError(
      response.status,
      typeof error?.error === 'string' ? error.error : `http_${response.status}`,
      typeof error?.message === 'string' ? error.message : `${method} ${path} answered ${response.status}`,
    );
  }
  return json as T;
}

function typePath(typeName: string): string {
  return `${API}/cluster/shards/${encodeURIComponent(typeName)}`;
}

export const api = {
  health: () => call<HealthAnswer>('GET', `${API}/health`),
  members: () => call<MembersAnswer>('GET', `${API}/cluster/members`),
  shards: (typeName: string) => call<ShardLocationsAnswer>('GET', typePath(typeName)),
  placements: (typeName: string) => call<PlacementsAnswer>('GET', `${typePath(typeName)}/placements`),
  pin: (typeName: string, body: PinRequestBody) => call<PinsWritten>('POST', `${typePath(typeName)}/placements`, body),
  /** The server's dry run of a pin: the moves it would start now; nothing is written. */
  dryRunPin: (typeName: string, body: PinRequestBody) =>
    call<PlacementsDryRunAnswer>('POST', `${typePath(typeName)}/placements?dryRun=true`, body),
  explain: (typeName: string, shardId: number) =>
    call<ExplainAnswer>('GET', `${typePath(typeName)}/explain/${shardId}`),
  audit: () => call<AuditAnswer>('GET', `${API}/audit`),
  unpin: (typeName: string, shardId: number) => call<void>('DELETE', `${typePath(typeName)}/placements/${shardId}`),
  moveNow: (typeName: string, shardIds: number[]) =>
    call<RebalanceAnswer>('POST', `${typePath(typeName)}/rebalance`, { shardIds }),
  /**
   * Cordon (POST .../cordon), uncordon (DELETE .../cordon) or drain (POST .../drain) a member: offered only
   * where members carry `cordoned`; a 404 `no route` hides the controls.
   */
  memberAction: (address: string, action: 'cordon' | 'uncordon' | 'drain', provenance: Provenance) => {
    const member = `${API}/cluster/members/${encodeURIComponent(address)}`;
    if (action !== 'uncordon') return call<unknown>('POST', `${member}/${action}`, provenance);
    const query = new URLSearchParams({ by: provenance.by, reason: provenance.reason });
    return call<unknown>('DELETE', `${member}/cordon?${query.toString()}`);
  },
};
