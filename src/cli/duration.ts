// Durations as operators type them (`--ttl 10m`): an integer with an optional unit, parsed strictly so a
// typo is an error rather than a pin that expires at a surprising time.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d{1,15})(ms|s|m|h|d)?$/;

/**
 * Milliseconds of `text`: `90s`, `10m`, `2h`, `1d`, `500ms`, or plain milliseconds (`600000`). Throws an
 * Error naming the accepted forms for anything else, zero, or more than Number.MAX_SAFE_INTEGER ms.
 */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text);
  if (match === null)
    throw new Error(
      `"${text}" is not a duration: expected an integer with an optional unit ms, s, m, h or d (e.g. 90s, 10m, 2h)`,
    );
  const ms = Number(match[1]) * (UNIT_MS[match[2] ?? 'ms'] as number);
  if (!Number.isSafeInteger(ms)) throw new Error(`duration "${text}" is too long`);
  if (ms === 0) throw new Error(`duration "${text}" must be longer than zero`);
  return ms;
}
