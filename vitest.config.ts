// Test runner configuration: unit, property and multi-process tests under test/; bench/ never runs here.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['bench/**', 'dist/**', 'node_modules/**'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
