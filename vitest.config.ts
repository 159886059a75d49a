import { defineConfig } from 'vitest/config';

// Tests spawn real git, real agents and the built CLI, so they get generous
// timeouts; no test ever sleeps to wait: they poll for a condition.
export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One private PostgreSQL server for the run (the store's PostgreSQL driver).
    globalSetup: ['test/setup/pg-global.ts'],
    env: { NODE_ENV: 'test', FORCE_COLOR: '0' },
  },
});
