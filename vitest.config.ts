import { defineConfig } from 'vitest/config';

// Tests that start Butler as a child process (and kill it on cue), and the MCP conformance suite (a Butler per
// scenario, all at once): under the parallel files' load a child's start-up alone can take most of a test's
// budget, so they run afterwards, one file at a time.
const processTests = [
  'tests/integration/service/**/*.test.ts',
  'tests/integration/core/recovery.test.ts',
  'tests/integration/terminal-chat/chat.test.ts',
  'tests/conformance/*.test.ts',
];

// One suite, two databases: `npm test` runs on embedded PGlite; with TEST_DATABASE_URL set the tests that
// reach a database run against real Postgres (each test file gets its own fresh database). The unit tests, the
// service's start-up checks and the conformance suite (a protocol check of the MCP client) do not depend on
// which database Butler has, so that pass leaves them to the PGlite run.
const withoutDatabase = ['tests/unit/**', 'tests/integration/service/start.test.ts', 'tests/conformance/**'];
const postgresPass = Boolean(process.env.TEST_DATABASE_URL);
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['tests/global-setup.ts'],
    env: { LOG_LEVEL: 'silent' },
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['tests/**/*.test.ts'],
          exclude: [...processTests, ...(postgresPass ? withoutDatabase : [])],
          // Most test time is waiting on sockets, child processes and timers: three files at once finish
          // in about 60% of the time on 2 cores (vitest's default here is one).
          maxWorkers: 3,
          // Files share a worker's module cache: importing the SDKs and the database drivers once per worker
          // instead of once per file took this project from about 455 s to 223 s on a 2-core machine (import
          // time 300 s → 23 s). Test files keep no state in src's modules, and restore what they change in
          // process.env.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'processes',
          include: processTests,
          exclude: postgresPass ? withoutDatabase : [],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
