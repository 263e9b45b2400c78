import { defineConfig } from 'vitest/config';

// One suite, two databases: `npm test` runs on embedded PGlite; with TEST_DATABASE_URL set the same
// tests run against real Postgres (each test file gets its own fresh database).
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    env: { LOG_LEVEL: 'silent' },
  },
});
