import { defineConfig } from 'vitest/config';

// The run's own tests again, against XState's production build (what plain `node` loads):
// vitest's default 'development' condition loads a build that behaves differently in places.
// Only the suites that drive runs in this process: the crash, cluster, server-restart and
// readme tests already run their runs in plain-node child processes (the production build),
// and the stores, the wire and the page do not depend on XState's build.
export default defineConfig({
  mode: 'production',
  test: {
    include: [
      'test/run.*.test.ts',
      'test/runs/**/*.test.ts',
      'test/model/**/*.test.ts',
      'test/property/**/*.test.ts',
      'test/context/**/*.test.ts',
      'test/multi-agent.test.ts',
      'test/durable.test.ts',
      'test/tools.*.test.ts',
      'test/inspect/**/*.test.ts',
      'test/otel/**/*.test.ts',
    ],
    // A throwaway PostgreSQL server unless TROUPE_TEST_POSTGRES_URL names one.
    globalSetup: ['test/setup/postgres.ts'],
    exclude: ['test/browser/**'],
    testTimeout: 20_000,
    server: { deps: { inline: ['xstate'] } },
  },
});
