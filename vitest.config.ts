import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A throwaway PostgreSQL server unless TROUPE_TEST_POSTGRES_URL names one.
    globalSetup: ['test/setup/postgres.ts'],
    testTimeout: 20_000,
  },
});
