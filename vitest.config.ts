import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'web/src/**/*.test.ts', 'web/e2e/**/*.e2e.test.ts'],
    exclude: ['**/*.live.test.ts', 'node_modules/**'],
    // Each file opens its own database (in-memory PGlite or a throwaway PostgreSQL database); forks keep
    // PGlite's WASM heaps apart.
    pool: 'forks',
    // vitest's default is one worker less than the cores: a single worker on a 2-core CI machine, idle while
    // a file waits on a spawned process, a lease or a socket. One per core keeps both cores busy.
    maxWorkers: Math.max(2, availableParallelism()),
    // Migrates one template per engine; every test database starts as a copy (src/testing/database-templates.ts).
    globalSetup: ['src/testing/global-setup.ts'],
    // CI also writes a JSON report, from which .ci/run prints the plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: process.env.VITEST_JSON_REPORT ?? '.ci/test-results.json' }]] : ['default'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
