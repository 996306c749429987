// The function-length check that `npm test` runs over the product's code: it measures every kind of function,
// refuses one over the limit unless the reviewed list allows it at no more than its listed length, and calls a
// listed entry stale once its function fits or is gone, so the list only shrinks.
import { describe, expect, it } from 'vitest';
import {
  MAX_FUNCTION_LINES,
  judgeFunctions,
  longFunctionsIn,
  type LongFunction,
} from '../scripts/check-function-lines.js';

/** A function body of `lines` lines in total (its first and last line included). */
const body = (lines: number): string => `{\n${'  call();\n'.repeat(lines - 2)}}`;

describe('check-function-lines', () => {
  it('measures declarations, methods, constructors and arrow functions, nested ones too', () => {
    const over = MAX_FUNCTION_LINES + 1;
    const text = [
      `export function declared() ${body(over)}`,
      `export function fits() ${body(MAX_FUNCTION_LINES)}`,
      `export const arrow = () => ${body(over)};`,
      `class C { constructor() ${body(over)}\n method() ${body(over)} }`,
      `export function outer() { const inner = () => ${body(over)}; }`,
    ].join('\n');
    expect(longFunctionsIn('src/x.ts', text).map((f) => [f.name, f.lines])).toEqual([
      ['declared', over],
      ['arrow', over],
      ['constructor', over],
      ['method', over],
      ['outer', over],
      ['inner', over],
    ]);
  });

  it('refuses a long function not listed, or longer than listed; a listed one may shrink', () => {
    const long = (name: string, lines: number): LongFunction => ({ path: 'src/a.ts', line: 1, name, lines });
    const known = { 'src/a.ts#listed': 100, 'src/a.ts#grown': 90 };
    const { refused, stale } = judgeFunctions([long('listed', 95), long('grown', 91), long('fresh', 81)], known);
    expect(refused.map((f) => f.name)).toEqual(['grown', 'fresh']);
    expect(stale).toEqual([]);
  });

  it('calls a listed entry stale once its function fits the limit or is gone', () => {
    expect(judgeFunctions([], { 'src/a.ts#split': 120 })).toEqual({ refused: [], stale: ['src/a.ts#split'] });
  });
});
