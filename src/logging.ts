// The runtime's logger: pino, structured JSON by default, silent in tests unless a test injects its own.
import { pino, type Logger as PinoLogger } from 'pino';

/** The logger every part of the runtime takes: pino's, so Fastify's own lines share its format. */
export type Logger = PinoLogger;

/** Options of createLogger. */
export interface LogOptions {
  /** pino level name; default 'info'. */
  readonly level?: string;
  /** Bound into every line, e.g. `{ node: 'app@127.0.0.1:7701' }`. */
  readonly bindings?: Record<string, string | number>;
}

/** A pino logger at `level` (default 'info') writing JSON lines to stdout, with `bindings` in every line. */
export function createLogger(options: LogOptions = {}): Logger {
  const logger = pino({ level: options.level ?? 'info' });
  return options.bindings ? logger.child(options.bindings) : logger;
}

/** A logger that writes nothing: the default wherever a logger is optional. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** One structured line written by a capturing logger: pino's numeric `level`, `msg`, and the bound fields. */
export type LogRecord = { readonly level: number; readonly msg?: string } & Readonly<Record<string, unknown>>;

/**
 * A logger that keeps every line in memory, for tests that assert something was logged (a refused peer,
 * a dropped message). Lines are parsed from pino's own JSON output, so they look exactly like production logs.
 */
export function captureLogger(level = 'debug'): { readonly logger: Logger; readonly records: LogRecord[] } {
  const records: LogRecord[] = [];
  const destination = {
    write(line: string): void {
      try {
        records.push(JSON.parse(line) as LogRecord);
      } catch {
        records.push({ level: 0, msg: line });
      }
    },
  };
  return { logger: pino({ level }, destination), records };
}

/**
 * A bounded description of any value for a log line or an error message: its type, its size and a preview cut
 * at `maxChars`. Never walks more of the value than the preview needs (a payload may be a huge or deeply
 * shared graph) and never throws (a throwing getter or toString is reported as such).
 */
export function describeValue(value: unknown, maxChars = 300): string {
  try {
    const out = { text: '', full: false };
    const limit = Math.max(16, maxChars);
    writePreview(value, out, limit, 0);
    const preview = out.full ? `${out.text.slice(0, limit)}...` : out.text;
    return `${kindOf(value)} ${preview}`;
  } catch {
    return `${kindOf(value)} (unprintable)`;
  }
}

const PREVIEW_DEPTH = 4;
/** Keys counted when sizing an object; beyond it the size is reported as a lower bound. */
const COUNT_KEYS = 1000;

function kindOf(value: unknown): string {
  try {
    if (value === null) return 'null';
    if (typeof value === 'string') return `string(${value.length} chars)`;
    if (value instanceof Uint8Array) return `bytes(${value.byteLength})`;
    if (Array.isArray(value)) return `array(${value.length})`;
    if (typeof value === 'object') {
      let keys = 0;
      for (const key in value) {
        if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
        if (++keys >= COUNT_KEYS) return `object(${COUNT_KEYS}+ keys)`;
      }
      return `object(${keys} keys)`;
    }
    return typeof value;
  } catch {
    return 'value';
  }
}

function writePreview(value: unknown, out: { text: string; full: boolean }, limit: number, depth: number): void {
  const put = (s: string): boolean => {
    if (out.full) return false;
    out.text += s;
    if (out.text.length > limit) out.full = true;
    return !out.full;
  };
  if (typeof value === 'string') {
    put(JSON.stringify(value.length > limit ? value.slice(0, limit) : value));
    return;
  }
  if (value === null || typeof value !== 'object') {
    put(typeof value === 'bigint' ? `${value}n` : typeof value === 'function' ? 'function' : String(value));
    return;
  }
  if (value instanceof Uint8Array) {
    put(
      `<${Buffer.from(value.subarray(0, Math.min(value.byteLength, 16))).toString('hex')}${value.byteLength > 16 ? '..' : ''}>`,
    );
    return;
  }
  if (depth >= PREVIEW_DEPTH) {
    put(Array.isArray(value) ? '[...]' : '{...}');
    return;
  }
  if (Array.isArray(value)) {
    if (!put('[')) return;
    for (let i = 0; i < value.length && !out.full; i++) {
      if (i > 0 && !put(',')) return;
      writePreview(value[i], out, limit, depth + 1);
    }
    put(']');
    return;
  }
  if (!put('{')) return;
  let first = true;
  for (const key in value) {
    if (out.full) return;
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    if (!first && !put(',')) return;
    first = false;
    if (!put(`${JSON.stringify(key.length > limit ? key.slice(0, limit) : key)}:`)) return;
    writePreview((value as Record<string, unknown>)[key], out, limit, depth + 1);
  }
  put('}');
}

export interface LogThrottleOptions {
  /** Window per key: after a line, further events of the key are only counted until it ends; default 10,000 ms. */
  readonly intervalMs?: number;
  /** Lines admitted per window over all keys together, so many keys cannot flood either; default 20. */
  readonly maxLinesPerInterval?: number;
  /** Keys remembered; the oldest are forgotten beyond it; default 1,024. */
  readonly maxKeys?: number;
  /** Clock; default `Date.now`. */
  readonly now?: () => number;
}

/**
 * Rate-limits log lines caused by remote peers (refused connections, bad frames), which an attacker can cause
 * at will: one line per key per interval, and that line reports how many events it stands for.
 */
export class LogThrottle {
  private readonly intervalMs: number;
  private readonly maxLines: number;
  private readonly maxKeys: number;
  private readonly now: () => number;
  private readonly keys = new Map<string, { until: number; suppressed: number }>();
  private globalUntil = 0;
  private globalLines = 0;
  private globalSuppressed = 0;

  constructor(options: LogThrottleOptions = {}) {
    this.intervalMs = options.intervalMs ?? 10_000;
    this.maxLines = options.maxLinesPerInterval ?? 20;
    this.maxKeys = options.maxKeys ?? 1024;
    this.now = options.now ?? Date.now;
  }

  /**
   * Records one event of `key`. Returns undefined when it must not be logged, else the number of events of the
   * key (and, when the global budget ran out, of any key) suppressed since the previous line, to put in it.
   */
  admit(key: string): number | undefined {
    const now = this.now();
    if (now >= this.globalUntil) {
      this.globalUntil = now + this.intervalMs;
      this.globalLines = 0;
    }
    const entry = this.keys.get(key);
    if (entry !== undefined && now < entry.until) {
      entry.suppressed++;
      return undefined;
    }
    if (this.globalLines >= this.maxLines) {
      this.globalSuppressed++;
      return undefined;
    }
    this.globalLines++;
    const suppressed = (entry?.suppressed ?? 0) + this.globalSuppressed;
    this.globalSuppressed = 0;
    this.keys.delete(key);
    this.keys.set(key, { until: now + this.intervalMs, suppressed: 0 });
    while (this.keys.size > this.maxKeys) {
      const oldest = this.keys.keys().next();
      if (oldest.done === true) break;
      this.keys.delete(oldest.value);
    }
    return suppressed;
  }
}
