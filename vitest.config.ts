// Test runner configuration: unit, property and multi-process tests under test/; bench/ never runs here. Two
// projects: the files that run in their own process on both cores at once, then the files that start clusters of
// node processes (or a browser, a database, a packed install), one at a time, as their timings assume a machine
// to themselves. Vitest alone would run every file one at a time on 2 cores (its default: the cores less one),
// and the in-process files spend much of their time starting their workers, which the other core can overlap.
import { defineConfig } from 'vitest/config';

/** Files that start processes of their own and time what they do: each runs alone. */
const MULTI_PROCESS = [
  'test/e2e/**/*.test.ts',
  'test/cli/node-removal.test.ts',
  'test/console/console-browser.test.ts',
  'test/console/console-real-cluster.test.ts',
  'test/examples/**/*.test.ts',
  'test/package/packed.test.ts',
  'test/persistence/processes.test.ts',
  'test/upgrade/**/*.test.ts',
];

export default defineConfig({
  test: {
    exclude: ['bench/**', 'dist/**', 'node_modules/**'],
    pool: 'forks',
    // Both cores for the in-process files (Vitest's own default is the cores less one); the project below runs
    // the multi-process files one at a time all the same.
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
          exclude: ['bench/**', 'dist/**', 'node_modules/**', ...MULTI_PROCESS],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'multi-process', include: MULTI_PROCESS, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
