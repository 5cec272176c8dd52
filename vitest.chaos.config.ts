import { defineConfig } from 'vitest/config';

/**
 * `npm run test:chaos`: the crash tests of every process (src/testing/chaos). Apart from the main suite, whose
 * `include` does not match `*.chaos.ts`: they restart the machine's PostgreSQL and SIGKILL servers, so they run alone,
 * one file after the other, after `npm test` in .ci/run.
 */
export default defineConfig({
  test: {
    include: ['src/testing/chaos/**/*.chaos.ts'],
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 20 * 60_000,
    hookTimeout: 120_000,
    // Figures are printed with console.log; show them as they come, not only for failing tests.
    silent: false,
  },
});
