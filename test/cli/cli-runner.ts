// Runs the CLI in-process through main() and reads what it printed: the operator command tests share it.
import { expect } from 'vitest';
import { main } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  out: string[];
  err: string[];
}

export async function run(...args: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['node', 'actor-ts-placement', ...args], {
    out: (line) => out.push(...line.split('\n')),
    err: (line) => err.push(...line.split('\n')),
  });
  return { code, out, err };
}

/**
 * Rows of a printed table (header, dashes, blank lines and `*` footnotes dropped), split on the two-space column gap.
 */
export function tableRows(lines: readonly string[]): string[][] {
  const dashes = lines.findIndex((line) => /^-+(\s+-+)*$/.test(line));
  expect(dashes).toBeGreaterThan(0);
  return lines
    .slice(dashes + 1)
    .filter((line) => line !== '' && !line.startsWith('*'))
    .map((line) => line.split(/\s{2,}/));
}
