// The audit ring: keeps the last `capacity` accepted writes, answers them newest first, and logs each one
// once as one structured line with action, typeName, shardIds, target, by, reason and hlc.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AuditLog, commonText, targetsText } from '../../src/management/audit.js';
import type { Logger } from '../../src/logging.js';

function recordingLogger(): { logger: Logger; lines: Array<{ fields: Record<string, unknown>; message: string }> } {
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const logger = {
    info: (fields: Record<string, unknown>, message: string) => void lines.push({ fields, message }),
  } as unknown as Logger;
  return { logger, lines };
}

describe('AuditLog', () => {
  it('keeps the last entries, newest first, for any number of writes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 30 }), (capacity, writes) => {
        const audit = new AuditLog(undefined, capacity, () => 0);
        for (let i = 0; i < writes; i++)
          audit.record({ action: 'rebalance', typeName: 'T', shardIds: [i], target: null, hlc: null });
        const expected = Array.from({ length: Math.min(capacity, writes) }, (_, i) => writes - 1 - i);
        expect(audit.entries().map((entry) => entry.shardIds[0])).toEqual(expected);
      }),
    );
  });

  it('logs each write once with every field, sorted shard ids and null for what was not given', () => {
    const { logger, lines } = recordingLogger();
    const audit = new AuditLog(logger, 10, () => Date.UTC(2030, 0, 1));
    const hlc = { wallMs: 1, counter: 0, node: 'n' };
    const entry = audit.record({ action: 'pin', typeName: 'T', shardIds: [3, 1], target: 'a@h:1', by: 'ann', hlc });
    expect(entry).toEqual({
      action: 'pin',
      typeName: 'T',
      shardIds: [1, 3],
      target: 'a@h:1',
      by: 'ann',
      reason: null,
      hlc,
      at: '2030-01-01T00:00:00.000Z',
    });
    expect(lines).toEqual([{ fields: { audit: true, ...entry }, message: 'audit: pin' }]);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new AuditLog(undefined, 0)).toThrow(RangeError);
    expect(() => new AuditLog(undefined, 1.5)).toThrow(RangeError);
  });

  it('names the targets and authors of a bulk write once each', () => {
    expect(targetsText(['a', 'b', 'a'])).toBe('a, b');
    expect(targetsText([])).toBeNull();
    expect(commonText(['x', null, 'x'])).toBe('x');
    expect(commonText([null, undefined])).toBeNull();
  });
});
