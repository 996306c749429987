// The runtime's logger: pino, structured JSON by default, silent in tests unless a test injects its own.
import { pino, type Logger } from 'pino';

export type { Logger };

export interface LogOptions {
  /** pino level name; default 'info'. */
  readonly level?: string;
  /** Bound into every line, e.g. `{ node: 'app@127.0.0.1:7701' }`. */
  readonly bindings?: Record<string, string | number>;
}

export function createLogger(options: LogOptions = {}): Logger {
  const logger = pino({ level: options.level ?? 'info' });
  return options.bindings ? logger.child(options.bindings) : logger;
}

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
