import { defineConfig } from 'vitest/config';

// The same suite against XState's production build (what plain `node` loads); vitest's
// default 'development' condition loads a build that behaves differently in places.
export default defineConfig({
  mode: 'production',
  test: {
    include: ['test/**/*.test.ts'],
    // A throwaway PostgreSQL server unless TROUPE_TEST_POSTGRES_URL names one.
    globalSetup: ['test/setup/postgres.ts'],
    exclude: ['test/browser/**'],
    testTimeout: 20_000,
    server: { deps: { inline: ['xstate'] } },
  },
});
