// Who may call which management route: the one `--auth-token` (every scope) and the named tokens of a tokens file
// (their scopes), checked by one hook per scope. Without a tokens file the old rules hold (the token guards writes,
// reads too with authReads); with one, every route but health needs a known token (401) whose scopes cover the route
// (403, naming the scope it needs). The file is followed: a change is read whole, and a bad one leaves the old
// tokens in force and says why in health.
import { timingSafeEqual } from 'node:crypto';
import { unwatchFile, watchFile, type Stats } from 'node:fs';
import type { FastifyRequest } from 'fastify';
import type { Logger } from '../logging.js';
import { HttpError } from './errors.js';
import { loadTokensFile, tokenDigest, type NamedToken, type Scope, type TokenTable } from './tokens-file.js';

export type AccessHook = (request: FastifyRequest) => Promise<void>;

/** Why a request was refused: no known token (401) or a token without the scope (403). */
export type AccessRefusal = 'unauthorized' | 'forbidden';

export interface AccessOptions {
  /** `--auth-token`: one unnamed token with every scope. */
  readonly authToken?: string | undefined;
  /** Without a tokens file: the auth token guards the read routes too. Default false. */
  readonly authReads?: boolean;
  /** `--tokens-file`: read now (a bad file throws TokensFileError) and followed for changes. */
  readonly tokensFile?: string | undefined;
  readonly logger?: Logger;
  /** How often the tokens file is checked for a change, in ms. Default 1000. */
  readonly reloadIntervalMs?: number;
}

/** The scope a management request needs by its method: reads `read`, writes `operate`. */
export function scopeOf(method: string): Scope {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'operate';
}

export class AccessControl {
  private tokens: TokenTable = new Map();
  private reloadProblem: string | undefined;
  private readonly legacy: Buffer | undefined;
  private readonly names = new WeakMap<FastifyRequest, string>();
  private readonly refused = new Map<string, number>();
  private readonly changed = (now: Stats, before: Stats): void => {
    if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) this.reload();
  };

  constructor(private readonly options: AccessOptions = {}) {
    this.legacy = options.authToken ? Buffer.from(options.authToken) : undefined;
    if (options.tokensFile !== undefined) {
      this.tokens = loadTokensFile(options.tokensFile);
      const interval = options.reloadIntervalMs ?? 1_000;
      watchFile(options.tokensFile, { interval, persistent: false }, this.changed);
    }
  }

  /** Whether a tokens file decides access (then health is the one open route). */
  get scoped(): boolean {
    return this.options.tokensFile !== undefined;
  }

  /** The hook a route of `scope` runs first; undefined when such routes are open. */
  guard(scope: Scope): AccessHook | undefined {
    if (!this.scoped) {
      if (this.legacy === undefined || (scope === 'read' && this.options.authReads !== true)) return undefined;
    }
    return async (request) => this.authorize(request, scope);
  }

  /** The guard of a route whose scope follows from its method (an application's routes). */
  guardByMethod(): AccessHook | undefined {
    const read = this.guard('read');
    const write = this.guard('operate');
    if (read === undefined && write === undefined) return undefined;
    return async (request) => (scopeOf(request.method) === 'read' ? read : write)?.(request);
  }

  /** Who asked: the name the request gives, else the name of the tokens-file token it was let in with. */
  readonly authorOf = (request: FastifyRequest, given: string | undefined): string | undefined =>
    given ?? this.nameOf(request);

  /** The name of the tokens-file token a request was let in with; undefined for the auth token or none. */
  nameOf(request: FastifyRequest): string | undefined {
    return this.names.get(request);
  }

  /** Why the tokens file's last change is not in force; empty when it is. A non-empty list makes health degraded. */
  problems(): string[] {
    return this.reloadProblem === undefined ? [] : [this.reloadProblem];
  }

  /** Requests refused so far, by the scope the route needed and why. */
  refusals(): Array<{ readonly scope: Scope; readonly reason: AccessRefusal; readonly count: number }> {
    return [...this.refused].map(([key, count]) => {
      const [scope, reason] = key.split(':') as [Scope, AccessRefusal];
      return { scope, reason, count };
    });
  }

  /** Reads the tokens file again: all of it in force, or (on any problem) none of it and the old tokens kept. */
  reload(): boolean {
    const file = this.options.tokensFile;
    if (file === undefined) return false;
    try {
      this.tokens = loadTokensFile(file);
      if (this.reloadProblem !== undefined) this.options.logger?.info({ file }, 'tokens file reloaded');
      this.reloadProblem = undefined;
      return true;
    } catch (error) {
      const problem = `the tokens file's last change is not in force, the earlier tokens are: ${String(
        error instanceof Error ? error.message : error,
      )}`;
      if (problem !== this.reloadProblem) this.options.logger?.warn({ file }, problem);
      this.reloadProblem = problem;
      return false;
    }
  }

  /** Stops following the tokens file. */
  close(): void {
    if (this.options.tokensFile !== undefined) unwatchFile(this.options.tokensFile, this.changed);
  }

  private authorize(request: FastifyRequest, scope: Scope): void {
    const presented = /^Bearer +(.*)$/i.exec(request.headers.authorization ?? '')?.[1];
    if (presented !== undefined && this.isLegacy(presented)) return;
    const token = presented === undefined ? undefined : this.tokens.get(tokenDigest(presented));
    if (token === undefined) {
      this.count(scope, 'unauthorized');
      throw new HttpError(401, 'unauthorized', 'missing or wrong bearer token');
    }
    if (!covers(token, scope)) {
      this.count(scope, 'forbidden');
      throw new HttpError(
        403,
        'forbidden',
        `token "${token.name}" has scopes ${[...token.scopes].join(', ')}; this route needs ${scope} (or admin)`,
      );
    }
    this.names.set(request, token.name);
  }

  // Constant-time compare so response timing does not leak the token. Named tokens are looked up by digest,
  // which leaks at most something about a hash, never the token.
  private isLegacy(presented: string): boolean {
    if (this.legacy === undefined) return false;
    const bytes = Buffer.from(presented);
    return bytes.length === this.legacy.length && timingSafeEqual(bytes, this.legacy);
  }

  private count(scope: Scope, reason: AccessRefusal): void {
    const key = `${scope}:${reason}`;
    this.refused.set(key, (this.refused.get(key) ?? 0) + 1);
  }
}

function covers(token: NamedToken, scope: Scope): boolean {
  return token.scopes.has('admin') || token.scopes.has(scope);
}
