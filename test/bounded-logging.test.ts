// Nothing a peer sends is ever written to a log or an error whole: values are described (type, size, a cut
// preview) and events a peer can cause at will are aggregated per interval.
import { describe, expect, it } from 'vitest';
import { testEntityContext } from './sharding/entity-context.js';
import { LogThrottle, describeValue } from '../src/logging.js';
import { counterBehavior } from '../src/node/counter.js';
import { MAX_ERROR_TEXT, describeError } from '../src/sharding/region/entity.js';

/** 2^levels leaves through shared references: what a structured-clone payload decoded to. */
function sharedGraph(levels: number): unknown {
  let node: unknown = ['leaf'];
  for (let i = 0; i < levels; i++) node = [node, node];
  return node;
}

describe('describeValue', () => {
  it('describes a 2^26-leaf shared graph in a bounded line without walking it', () => {
    const text = describeValue(sharedGraph(26), 300);
    expect(text.length).toBeLessThan(400);
    expect(text).toMatch(/^array\(2\) \[\[\[\[/);
  });

  it('gives type, size and a cut preview, and survives hostile objects', () => {
    expect(describeValue('x'.repeat(10_000), 50)).toMatch(/^string\(10000 chars\) "x{40,}\.\.\.$/);
    expect(describeValue('x'.repeat(10_000), 50).length).toBeLessThan(120);
    expect(describeValue({ op: 'nope', by: 2 })).toBe('object(2 keys) {"op":"nope","by":2}');
    expect(describeValue(new Uint8Array(100))).toMatch(/^bytes\(100\) <0{32}\.\.>$/);
    const wide = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
    expect(describeValue(wide)).toMatch(/^object\(1000\+ keys\)/);
    const hostile = {
      get boom(): never {
        throw new Error('getter');
      },
    };
    expect(describeValue(hostile)).toMatch(/^object\(1 keys\) \(unprintable\)$/);
    expect(describeValue(Object.create(null))).toBe('object(0 keys) {}');
    expect(describeValue(10n)).toBe('bigint 10n');
  });
});

describe('bounded entity errors', () => {
  it('the demo counter rejects an unknown command with a bounded message, whatever the command is', () => {
    const counter = counterBehavior(testEntityContext().ctx);
    let message = '';
    try {
      counter.receive({ op: 'x', payload: sharedGraph(26) });
    } catch (error) {
      message = describeError(error);
    }
    expect(message).toMatch(/^unknown counter command object\(2 keys\)/);
    expect(message.length).toBeLessThanOrEqual(MAX_ERROR_TEXT);
  });

  it('describeError cuts long texts and describes arrays instead of joining them', () => {
    expect(describeError(new Error('y'.repeat(100_000))).length).toBeLessThanOrEqual(MAX_ERROR_TEXT);
    expect(describeError('z'.repeat(100_000))).toMatch(/\(100000 chars\)$/);
    expect(describeError(sharedGraph(26)).length).toBeLessThanOrEqual(MAX_ERROR_TEXT);
  });
});

describe('LogThrottle', () => {
  it('admits one line per key per interval and reports what it stood in for', () => {
    let now = 0;
    const throttle = new LogThrottle({ intervalMs: 1000, now: () => now });
    expect(throttle.admit('a')).toBe(0);
    for (let i = 0; i < 99; i++) expect(throttle.admit('a')).toBeUndefined();
    expect(throttle.admit('b')).toBe(0);
    now = 999;
    expect(throttle.admit('a')).toBeUndefined();
    now = 1000;
    expect(throttle.admit('a')).toBe(100);
    expect(throttle.admit('a')).toBeUndefined();
  });

  it('caps lines over all keys, so many peers cannot flood the log either', () => {
    let now = 0;
    const throttle = new LogThrottle({ intervalMs: 1000, maxLinesPerInterval: 3, maxKeys: 2, now: () => now });
    const admitted = Array.from({ length: 50 }, (_, i) => throttle.admit(`peer-${i}`)).filter((n) => n !== undefined);
    expect(admitted).toEqual([0, 0, 0]);
    now = 1000;
    // The first line of the next interval carries the 47 events the budget suppressed.
    expect(throttle.admit('peer-x')).toBe(47);
  });
});
