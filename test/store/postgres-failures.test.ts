import { createServer } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreUnavailable, UserError } from '../../src/errors.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { migratePostgres } from '../../src/store/postgres-migrate.js';
import { PostgresSession } from '../../src/store/postgres-session.js';
import { POSTGRES_URL, adminQuery, expectRejects, shownUrl, usePostgresSchema } from './harnesses.js';
import { head, input, reply, result } from './store-helpers.js';

/** A loopback port nothing listens on (the kernel picked it free, then it was closed again). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves with what `promise` rejected with (or fails the test when it resolved). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

let apps = 0;

describe(`PostgreSQL stores: unavailable databases and failed writes`, () => {
  const freshSchema = usePostgresSchema();
  const url = POSTGRES_URL!;
  const opened: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  const open = (connection: string | { connectionString: string; applicationName?: string }, schema?: string) => {
    const store = new PostgresCheckpointStore(connection, schema ? { schema } : {});
    opened.push(store);
    return store;
  };
  const withUrl = (change: (u: URL) => void) => {
    const u = new URL(url);
    change(u);
    return u.toString();
  };

  it('an unreachable server is StoreUnavailable naming the store (no password) with the driver error as cause', async () => {
    const port = await closedPort();
    const target = withUrl((u) => (u.port = String(port)));
    const store = open(target);
    const where = `PostgreSQL checkpoint store '${shownUrl(target)}' schema 'public'`;
    const message = `Cannot use ${where}: connection refused, is the server running and listening there? (connect ECONNREFUSED 127.0.0.1:${port}); nothing was written.`;
    for (const use of [() => store.load('r1'), () => store.append('r1', [input()], head()), () => store.claim('r1', 'A', 10)]) {
      const error = await expectRejects(use, StoreUnavailable, message);
      expect([error.code, error.name, error.store, error.outcome, (error.cause as { code?: string }).code]).toEqual(['STORE_UNAVAILABLE', 'StoreUnavailable', where, 'not_written', 'ECONNREFUSED']);
    }
    expect(message).not.toContain(new URL(url).password);
    await expectRejects(() => migratePostgres(target), StoreUnavailable, message.replace('checkpoint store', 'database'));
  });

  it('wrong credentials and a missing database are StoreUnavailable with the server’s reason', async () => {
    const badPassword = withUrl((u) => (u.password = 'not-the-password'));
    const denied = await expectRejects(
      () => open(badPassword).load('r1'),
      StoreUnavailable,
      `Cannot use PostgreSQL checkpoint store '${shownUrl(url)}' schema 'public': password authentication failed for user "${new URL(url).username}"; nothing was written.`,
    );
    expect((denied.cause as { code?: string }).code).toBe('28P01');
    const noDatabase = withUrl((u) => (u.pathname = '/troupe_no_such_db'));
    const missing = await expectRejects(
      () => new PostgresSession(noDatabase).history('s'),
      StoreUnavailable,
      `Cannot use PostgreSQL session store '${shownUrl(noDatabase)}' schema 'public': database "troupe_no_such_db" does not exist; nothing was written.`,
    );
    expect((missing.cause as { code?: string }).code).toBe('3D000');
  });

  it('a connection string that is not a postgres:// URL is a UserError without its secret', () => {
    expect(() => new PostgresCheckpointStore('mysql://me:secret@db/x')).toThrow(new UserError('A PostgreSQL connection string must start with postgres:// or postgresql://, got "mysql://me:***@db/x".'));
  });

  it('a connection dropped in the middle of an append: StoreUnavailable, nothing written, the next append works', async () => {
    const schema = await freshSchema();
    const applicationName = `troupe-drop-${process.pid}-${(apps += 1)}`;
    const store = open({ connectionString: url, applicationName }, schema);
    await store.append('r1', [input()], head());
    // Hold the run's writer lock from outside, so the append waits inside its transaction.
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    try {
      await blocker.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`troupe/${schema}/run/r1`]);
      const pending = rejection(store.append('r1', [reply(1, ['c1']), result(1, 'c1')], head({ turn: 1 })));
      let waiting: Array<{ pid: number }> = [];
      while (waiting.length === 0) {
        waiting = await adminQuery<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [applicationName]);
      }
      await adminQuery('SELECT pg_terminate_backend($1)', [waiting[0]!.pid]);
      const error = (await pending) as StoreUnavailable;
      expect(error).toBeInstanceOf(StoreUnavailable);
      expect(error.message).toBe(`Cannot use PostgreSQL checkpoint store '${shownUrl(url)}' schema '${schema}': terminating connection due to administrator command; nothing was written.`);
      expect([error.outcome, (error.cause as { code?: string }).code]).toEqual(['not_written', '57P01']);
    } finally {
      await blocker.end();
    }
    expect(await store.load('r1')).toEqual({ entries: [input()], head: head(), schemaVersion: 6 });
    await store.append('r1', [reply(1)], head({ turn: 1 }));
    expect((await store.load('r1'))?.entries).toEqual([input(), reply(1)]);
  });

  it('idle connections the server closes are replaced without an error', async () => {
    const schema = await freshSchema();
    const applicationName = `troupe-idle-${process.pid}-${(apps += 1)}`;
    const store = open({ connectionString: url, applicationName }, schema);
    await store.append('r1', [input()], head());
    const killed = await adminQuery<{ ok: boolean }>('SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
    expect(killed.length).toBeGreaterThan(0);
    while ((await adminQuery('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [applicationName])).length > 0);
    // The pool may still hand out the dead connection once: that operation fails typed, the next one reconnects.
    const first = await store.load('r1').catch((error: unknown) => error);
    if (first instanceof Error) expect(first).toBeInstanceOf(StoreUnavailable);
    expect((await store.load('r1'))?.entries).toEqual([input()]);
  });

  it('a statement failing part-way through an append stores none of it and keeps the old head', async () => {
    const schema = await freshSchema();
    const store = open(url, schema);
    await store.append('r1', [input()], head());
    await adminQuery(`
      CREATE FUNCTION "${schema}".boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.seq = 3 THEN RAISE EXCEPTION 'disk says no'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER boom BEFORE INSERT ON "${schema}".troupe_entries FOR EACH ROW EXECUTE FUNCTION "${schema}".boom();`);
    const error = await rejection(store.append('r1', [reply(1, ['c1']), result(1, 'c1')], head({ turn: 1 })));
    expect([error instanceof pg.DatabaseError, (error as Error).message]).toEqual([true, 'disk says no']);
    expect(await store.load('r1')).toEqual({ entries: [input()], head: head(), schemaVersion: 6 });
    await store.append('r1', [reply(1)], head({ turn: 1 }));
    expect((await store.load('r1'))?.entries).toEqual([input(), reply(1)]);
  });

  it('a closed store refuses further use', async () => {
    const schema = await freshSchema();
    const store = new PostgresCheckpointStore(url, { schema });
    await store.append('r1', [input()], head());
    await store.close();
    await store.close();
    await expectRejects(() => store.load('r1'), UserError, `PostgreSQL checkpoint store '${shownUrl(url)}' schema '${schema}' is closed.`);
  });
});
