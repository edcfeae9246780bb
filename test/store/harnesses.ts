/**
 * The three stores behind one shape, for the shared contract suites (contract.ts,
 * session-contract.ts): each `fresh*()` call gives storage no other test sees (a new SQLite
 * file, a new PostgreSQL schema), and everything opened is closed after the test.
 */
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, expect, inject } from 'vitest';
import { MemoryCheckpointStore, type CheckpointStore, type Lease } from '../../src/store/checkpoint-store.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { migratePostgres } from '../../src/store/postgres-migrate.js';
import { POSTGRES_CHECKPOINTS } from '../../src/store/postgres-layout.js';
import { PostgresSession } from '../../src/store/postgres-session.js';
import { MemorySession, type Session } from '../../src/store/session.js';
import { SqliteCheckpointStore } from '../../src/store/sqlite-checkpoint-store.js';
import { SqliteSession } from '../../src/store/sqlite-session.js';
import { raw, useTempDir } from './store-helpers.js';

/** A store with every optional method (all three stores have them). */
export type ContractStore = Required<Pick<CheckpointStore, 'append' | 'load' | 'list' | 'delete' | 'claim' | 'renew' | 'release' | 'close'>> & {
  appendBatch?: (requests: Parameters<SqliteCheckpointStore['appendBatch']>[0]) => unknown;
};

export interface Backing<S> {
  /** A store on this storage; stores opened from one backing see each other's writes. */
  open(now?: () => number): S;
  /** How the store names itself in messages ("SQLite checkpoint store '/tmp/…/runs.db'"). */
  readonly where: string;
  /** Runs raw SQL on the storage (table names as in format.md); absent for memory. */
  readonly sql?: (statement: string) => Promise<void>;
  /** The component's table layout version (for the newer-layout message). */
  readonly layout?: number;
}

export interface Harness {
  readonly name: string;
  /** Why this store's tests are skipped here, when they are. */
  readonly skip?: string;
  /** Whether its backings offer `sql` (raw access to damage records). */
  readonly raw: boolean;
  /** Whether its stores have `appendBatch` (group commit). */
  readonly batch: boolean;
  checkpoints(): Promise<Backing<ContractStore>>;
  sessions(): Promise<Backing<Session & { close(): unknown }>>;
}

/** A clock the test moves by hand. */
export function manualClock(start = 1000): { now: () => number; set(t: number): void; advance(ms: number): void } {
  let t = start;
  return { now: () => t, set: (v) => (t = v), advance: (ms) => (t += ms) };
}

/** Awaits `fn` and asserts it rejects with an instance of `type` whose message is exactly `message`. */
export async function expectRejects<E extends Error>(fn: () => unknown, type: new (...args: never[]) => E, message: string): Promise<E> {
  let thrown: unknown;
  try {
    await fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(type);
  expect((thrown as Error).message).toBe(message);
  return thrown as E;
}

export const lease = (runId: string, owner: string, expiresAt: number): Lease => ({ runId, owner, expiresAt });

export const memoryHarness: Harness = {
  name: 'MemoryCheckpointStore',
  raw: false,
  batch: false,
  async checkpoints() {
    let store: MemoryCheckpointStore | undefined;
    return { where: 'memory', open: (now) => (store ??= new MemoryCheckpointStore(now ? { now } : {})) };
  },
  async sessions() {
    const session = new MemorySession();
    return { where: 'memory', open: () => session };
  },
};

export function sqliteHarness(): Harness {
  const tempDir = useTempDir();
  const opened: Array<{ close(): unknown }> = [];
  afterEach(() => {
    for (const store of opened.splice(0)) store.close();
  });
  const sql = (path: string) => async (statement: string) => {
    const db = raw(path);
    db.exec(statement);
    db.close();
  };
  return {
    name: 'SqliteCheckpointStore',
    raw: true,
    batch: true,
    async checkpoints() {
      const path = join(tempDir(), 'runs.db');
      return {
        where: `SQLite checkpoint store '${path}'`,
        layout: 2,
        sql: sql(path),
        open: (now) => {
          const store = new SqliteCheckpointStore(path, now ? { now } : {});
          opened.push(store);
          return store;
        },
      };
    },
    async sessions() {
      const path = join(tempDir(), 'sessions.db');
      return {
        where: `SQLite session store '${path}'`,
        layout: 1,
        sql: sql(path),
        open: () => {
          const session = new SqliteSession(path);
          opened.push(session);
          return session;
        },
      };
    },
  };
}

/**
 * The server the tests use: TROUPE_TEST_POSTGRES_URL when set, else the throwaway server
 * the global setup started (test/setup/postgres.ts), so no PostgreSQL test is ever skipped.
 */
export const POSTGRES_URL: string = process.env.TROUPE_TEST_POSTGRES_URL || inject('troupePostgresUrl');

/** The URL as the stores print it: no password. */
export function shownUrl(url: string): string {
  const u = new URL(url);
  return `postgres://${u.username}@${u.hostname}:${u.port}/${u.pathname.slice(1)}`;
}

/** Runs SQL on the test server outside any store (its own short-lived connection). */
export async function adminQuery<Row = Record<string, unknown>>(statement: string, params: unknown[] = [], url = POSTGRES_URL!): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(statement, params)).rows as Row[];
  } finally {
    await client.end();
  }
}

let schemas = 0;

/** A new schema for one test, migrated unless `migrate` is false; dropped after the test. */
export function usePostgresSchema(): (migrate?: boolean) => Promise<string> {
  const created: string[] = [];
  afterEach(async () => {
    for (const schema of created.splice(0)) await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
  return async (migrate = true) => {
    const schema = `t_${process.pid}_${Date.now().toString(36)}_${(schemas += 1)}`;
    created.push(schema);
    if (migrate) await migratePostgres(POSTGRES_URL!, { schema });
    return schema;
  };
}

export function postgresHarness(): Harness {
  const freshSchema = usePostgresSchema();
  const opened: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  const sql = (schema: string) => async (statement: string) => {
    await adminQuery(`SET search_path TO "${schema}"; ${statement}`);
  };
  const where = (label: string, schema: string) => `PostgreSQL ${label} '${shownUrl(POSTGRES_URL!)}' schema '${schema}'`;
  return {
    name: 'PostgresCheckpointStore',
    raw: true,
    batch: true,
    async checkpoints() {
      const schema = await freshSchema();
      return {
        where: where('checkpoint store', schema),
        layout: POSTGRES_CHECKPOINTS.version,
        sql: sql(schema),
        open: (now) => {
          const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema, ...(now ? { now } : {}) });
          opened.push(store);
          return store;
        },
      };
    },
    async sessions() {
      const schema = await freshSchema();
      return {
        where: where('session store', schema),
        layout: 1,
        sql: sql(schema),
        open: () => {
          const session = new PostgresSession(POSTGRES_URL!, { schema });
          opened.push(session);
          return session;
        },
      };
    },
  };
}
