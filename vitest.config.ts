// Test runner configuration: unit, property and multi-process tests under test/; bench/ never runs here. Three
// groups, one after the other:
// 0. the files that run in their own process, on both cores, sharing each worker's module cache (isolate: false:
//    a file no longer pays for loading the sources again, most of those files' time), except the few that
//    replace modules with mocks, which need a fresh module graph each (ISOLATED);
// 1. the files that start node processes (or a browser, a packed install) but assert no timing, two at a time;
// 2. the files whose assertions rest on timing (failure detection, downing, partitions, pauses, deadlines), one
//    at a time, as they assume a machine to themselves.
// Vitest alone would run every file one at a time on 2 cores (its default: the cores less one).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Files that replace modules with mocks (vi.mock, vi.doMock): each needs its own module graph. Found by reading
 * the files, so a new one cannot share a graph by being left off a list.
 */
const TEST_DIR = fileURLToPath(new URL('test', import.meta.url));
const ISOLATED = (readdirSync(TEST_DIR, { recursive: true }) as string[])
  .filter((file) => file.endsWith('.test.ts'))
  .filter((file) => /\bvi\.(mock|doMock)\(/.test(readFileSync(join(TEST_DIR, file), 'utf8')))
  .map((file) => join('test', file));

/** Files that start processes of their own but whose waits are generous and whose checks are not timings. */
const MULTI_PROCESS_SHARED = [
  'test/package/packed.test.ts',
  'test/console/console-browser.test.ts',
  'test/console/console-real-cluster.test.ts',
  'test/e2e/local-cluster.test.ts',
  'test/e2e/durability.test.ts',
  'test/e2e/cluster-tls.test.ts',
  'test/e2e/compaction.test.ts',
  'test/e2e/generation-poison.test.ts',
  'test/e2e/drain.test.ts',
  'test/persistence/processes.test.ts',
];

/** Files that start processes and time what they do: each runs alone. */
const MULTI_PROCESS_ALONE = [
  'test/e2e/**/*.test.ts',
  'test/examples/**/*.test.ts',
  'test/cli/node-removal.test.ts',
  'test/upgrade/**/*.test.ts',
];

const EXCLUDED = ['bench/**', 'dist/**', 'node_modules/**'];

export default defineConfig({
  test: {
    exclude: EXCLUDED,
    pool: 'forks',
    // Both cores (Vitest's own default is the cores less one); the last group runs its files one at a time.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'in-process',
          include: ['test/**/*.test.ts'],
          exclude: [...EXCLUDED, ...ISOLATED, ...MULTI_PROCESS_SHARED, ...MULTI_PROCESS_ALONE],
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'in-process-isolated', include: ISOLATED, sequence: { groupOrder: 0 } } },
      {
        extends: true,
        test: { name: 'multi-process-shared', include: MULTI_PROCESS_SHARED, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        test: {
          name: 'multi-process',
          include: MULTI_PROCESS_ALONE,
          exclude: [...EXCLUDED, ...MULTI_PROCESS_SHARED],
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
