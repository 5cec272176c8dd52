import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'web/src/**/*.test.ts', 'web/e2e/**/*.e2e.test.ts'],
    exclude: ['**/*.live.test.ts', 'node_modules/**'],
    // Each file opens its own database (in-memory PGlite or a throwaway PostgreSQL database); forks keep
    // PGlite's WASM heaps apart and stay within 2 cores.
    pool: 'forks',
    // CI also writes a JSON report, from which .ci/run prints the plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.ci/test-results.json' }]] : ['default'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
