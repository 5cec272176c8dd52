import { defineConfig } from 'vitest/config';

/** `npm run test:live`: the same agent scenarios against a real endpoint (needs LLM_BASE_URL and LLM_MODEL). */
export default defineConfig({
  test: {
    include: ['src/**/*.live.test.ts'],
    pool: 'forks',
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
