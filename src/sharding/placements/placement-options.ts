// A pin's rule besides its target: mode (prefer or require), expiry, and provenance (reason, by). The
// validators here are the one place that says what is acceptable; the controller, the HTTP schema layer and
// the CLI call them, so a value is judged the same way wherever it comes in. The rule is stored with the
// target as the slot's meta record (crdt/slot-meta.ts), and read back leniently: a value a newer or foreign
// writer stored must never stop a replica from reading the rest.
import { MAX_HLC_WALL_MS, type Placement } from '../../../crdt/index.js';
import { PlacementRuleError } from './placement-rule-error.js';
import { MAX_BY_LENGTH, MAX_REASON_LENGTH } from './text-limits.js';

/** `prefer` (the default): honoured when possible, else the fallback places the shard. `require`: only there. */
export type PlacementMode = 'prefer' | 'require';
/** Every accepted PlacementMode, for validation and help texts. */
export const PLACEMENT_MODES: ReadonlyArray<PlacementMode> = Object.freeze(['prefer', 'require']);

/** What a caller may give with a pin; `ttlMs` and `expiresAt` exclude each other. */
export interface PlacementOptions {
  readonly mode?: PlacementMode;
  /** Milliseconds from now until the pin stops steering allocation: a positive integer. */
  readonly ttlMs?: number;
  /** When the pin stops steering allocation: an ISO-8601 date-time with a zone (`Z` or `+hh:mm`), or a Date. */
  readonly expiresAt?: string | Date;
  /** Why the pin exists, at most MAX_REASON_LENGTH characters. */
  readonly reason?: string;
  /** Who asked, at most MAX_BY_LENGTH characters. */
  readonly by?: string;
}

/** The rule as the runtime keeps it: expiry as absolute epoch milliseconds. */
export interface PlacementRule {
  readonly mode: PlacementMode;
  readonly expiresAt: number | null;
  readonly reason: string | null;
  readonly by: string | null;
}

export { MAX_BY_LENGTH, MAX_REASON_LENGTH };
/** Latest accepted expiry: the placement store's timestamp range ends there (2200-01-01). */
export const MAX_EXPIRES_AT_MS = MAX_HLC_WALL_MS;
/** The rule of a pin written without options: prefer, never expiring, no reason or author. */
export const DEFAULT_PLACEMENT_RULE: PlacementRule = Object.freeze({
  mode: 'prefer',
  expiresAt: null,
  reason: null,
  by: null,
});

const OPTION_KEYS: ReadonlySet<string> = new Set(['mode', 'ttlMs', 'expiresAt', 'reason', 'by']);
// Date and time with seconds optional, fraction optional, and a zone required: a date-time without a zone
// means a different instant on every node.
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;
// Control characters would corrupt log lines and CLI tables.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Validates options given with a pin against the clock reading `now` and returns the rule to store. Throws
 * `PlacementRuleError` `invalid_placement` naming the first problem; nothing is written then.
 */
export function validatePlacementOptions(options: unknown, now: number): PlacementRule {
  if (options === undefined) return DEFAULT_PLACEMENT_RULE;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid(`placement options must be an object, got ${options === null ? 'null' : typeof options}`);
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key))
      throw invalid(
        `unknown placement option ${JSON.stringify(key.slice(0, 40))}: expected mode, ttlMs, expiresAt, reason or by`,
      );
  }
  const { mode, ttlMs, expiresAt, reason, by } = options as Record<string, unknown>;
  if (ttlMs !== undefined && expiresAt !== undefined) throw invalid('give ttlMs or expiresAt, not both');
  return Object.freeze({
    mode: mode === undefined ? 'prefer' : validatePlacementMode(mode),
    expiresAt:
      ttlMs !== undefined
        ? expiryFromTtl(validateTtlMs(ttlMs), now)
        : expiresAt !== undefined
          ? validateExpiresAt(expiresAt, now)
          : null,
    reason: reason === undefined ? null : validateReason(reason),
    by: by === undefined ? null : validateBy(by),
  });
}

/** Checks a pin's mode; throws PlacementRuleError unless 'prefer' or 'require'. */
export function validatePlacementMode(mode: unknown): PlacementMode {
  if (mode === 'prefer' || mode === 'require') return mode;
  throw invalid(`mode must be "prefer" or "require", got ${describeValue(mode)}`);
}

/** A positive integer number of milliseconds. */
export function validateTtlMs(ttlMs: unknown): number {
  if (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw invalid(`ttlMs must be a positive integer number of milliseconds, got ${describeValue(ttlMs)}`);
  }
  return ttlMs;
}

/** An ISO-8601 date-time with a zone (or a Date) strictly after `now`; returns epoch milliseconds. */
export function validateExpiresAt(expiresAt: unknown, now: number): number {
  let ms: number;
  if (expiresAt instanceof Date) {
    ms = expiresAt.getTime();
  } else if (typeof expiresAt === 'string' && expiresAt.length <= 40 && ISO_8601.test(expiresAt)) {
    ms = Date.parse(expiresAt);
  } else {
    throw invalid(
      `expiresAt must be an ISO-8601 date-time with a zone, e.g. "2030-01-31T12:00:00Z", got ${describeValue(expiresAt)}`,
    );
  }
  if (!Number.isSafeInteger(ms)) throw invalid(`expiresAt ${describeValue(expiresAt)} is not a valid date-time`);
  if (ms <= now)
    throw invalid(
      `expiresAt ${new Date(ms).toISOString()} is not in the future (now is ${new Date(now).toISOString()})`,
    );
  if (ms > MAX_EXPIRES_AT_MS) throw invalid(`expiresAt must be before ${new Date(MAX_EXPIRES_AT_MS).toISOString()}`);
  return ms;
}

/** Checks a pin's reason; throws PlacementRuleError unless a string within MAX_REASON_LENGTH. */
export function validateReason(reason: unknown): string {
  return text('reason', reason, MAX_REASON_LENGTH);
}

/** Checks a pin's author (`by`); throws PlacementRuleError unless a string within MAX_BY_LENGTH. */
export function validateBy(by: unknown): string {
  return text('by', by, MAX_BY_LENGTH);
}

/** The slot meta a rule is stored as; undefined for the default rule, so a plain pin stays a version-2 value. */
export function ruleToMeta(rule: PlacementRule): Readonly<Record<string, string | number>> | undefined {
  const meta: Record<string, string | number> = {};
  if (rule.mode !== 'prefer') meta.mode = rule.mode;
  if (rule.expiresAt !== null) meta.expiresAt = rule.expiresAt;
  if (rule.reason !== null) meta.reason = rule.reason;
  if (rule.by !== null) meta.by = rule.by;
  return Object.keys(meta).length === 0 ? undefined : meta;
}

/**
 * The rule stored with a placement. Lenient on purpose: a mode this version does not know reads as prefer
 * (a pin never strands a shard because of a newer writer), a malformed field as absent.
 */
export function ruleOf(placement: Pick<Placement, 'meta'>): PlacementRule {
  const meta = placement.meta;
  if (meta === undefined) return DEFAULT_PLACEMENT_RULE;
  const { mode, expiresAt, reason, by } = meta;
  return Object.freeze({
    mode: mode === 'require' ? 'require' : 'prefer',
    expiresAt: typeof expiresAt === 'number' && Number.isSafeInteger(expiresAt) ? expiresAt : null,
    reason: typeof reason === 'string' ? reason.slice(0, MAX_REASON_LENGTH) : null,
    by: typeof by === 'string' ? by.slice(0, MAX_BY_LENGTH) : null,
  });
}

/** True once `now` reached the rule's expiry: the pin no longer steers allocation and is not listed. */
export function isExpired(rule: Pick<PlacementRule, 'expiresAt'>, now: number): boolean {
  return rule.expiresAt !== null && now >= rule.expiresAt;
}

function expiryFromTtl(ttlMs: number, now: number): number {
  const at = now + ttlMs;
  if (!Number.isSafeInteger(at) || at > MAX_EXPIRES_AT_MS)
    throw invalid(`ttlMs ${ttlMs} ends after ${new Date(MAX_EXPIRES_AT_MS).toISOString()}`);
  return at;
}

function text(name: string, value: unknown, max: number): string {
  if (typeof value !== 'string') throw invalid(`${name} must be a string, got ${describeValue(value)}`);
  if (value.length === 0) throw invalid(`${name} must not be empty (leave it out instead)`);
  if (value.length > max) throw invalid(`${name} is ${value.length} characters long, at most ${max} are allowed`);
  if (CONTROL.test(value)) throw invalid(`${name} must not contain control characters`);
  return value;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined)
    return String(value);
  return typeof value;
}

function invalid(message: string): PlacementRuleError {
  return new PlacementRuleError('invalid_placement', message);
}
