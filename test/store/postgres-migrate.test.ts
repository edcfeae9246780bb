import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { enqueueRun } from '../../src/store/postgres-queue.js';
import { migratePostgres } from '../../src/store/postgres-migrate.js';
import { PostgresSession } from '../../src/store/postgres-session.js';
import { POSTGRES_URL, adminQuery, expectRejects, shownUrl, usePostgresSchema } from './harnesses.js';
import type { CheckpointEntry } from '../../src/store/checkpoint-store.js';
import { head, input, reply, result, turnEnd } from './store-helpers.js';

const tables = async (schema: string) =>
  (await adminQuery<{ name: string }>('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [schema])).map((r) => r.name);

describe(`PostgreSQL migration`, () => {
  const freshSchema = usePostgresSchema();
  const url = POSTGRES_URL!;

  it('a store on an unmigrated schema refuses every use, telling the command to run, and creates nothing', async () => {
    const schema = await freshSchema(false);
    const store = new PostgresCheckpointStore(url, { schema });
    const session = new PostgresSession(url, { schema });
    try {
      const hint = `run \`troupe db migrate --db '${shownUrl(url)}' --schema ${schema}\` first (troupe never creates tables on its own).`;
      const where = `PostgreSQL checkpoint store '${shownUrl(url)}' schema '${schema}'`;
      for (const use of [() => store.load('r1'), () => store.append('r1', [input()], head()), () => store.list(), () => store.claim('r1', 'A', 10)]) {
        await expectRejects(use, UserError, `${where} has no troupe checkpoints tables: ${hint}`);
      }
      await expectRejects(() => session.history('s'), UserError, `PostgreSQL session store '${shownUrl(url)}' schema '${schema}' has no troupe sessions tables: ${hint}`);
      expect(await adminQuery('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).toEqual([]);
    } finally {
      await store.close();
      await session.close();
    }
  });

  it('creates the schema and every table once, records the layout versions, and changes nothing when run again', async () => {
    const schema = await freshSchema(false);
    expect(await migratePostgres(url, { schema })).toEqual([
      { component: 'checkpoints', from: undefined, to: 3 },
      { component: 'sessions', from: undefined, to: 1 },
    ]);
    expect(await tables(schema)).toEqual(['troupe_entries', 'troupe_events', 'troupe_jobs', 'troupe_leases', 'troupe_messages', 'troupe_meta', 'troupe_runs', 'troupe_session_messages', 'troupe_session_runs']);
    const store = new PostgresCheckpointStore(url, { schema });
    await store.append('r1', [input()], head());
    expect(await migratePostgres(url, { schema })).toEqual([
      { component: 'checkpoints', from: 3, to: 3 },
      { component: 'sessions', from: 1, to: 1 },
    ]);
    expect((await store.load('r1'))?.entries).toEqual([input()]);
    await store.close();
    expect(await adminQuery(`SELECT component, schema_version FROM "${schema}".troupe_meta ORDER BY component`)).toEqual([
      { component: 'checkpoints', schema_version: 3 },
      { component: 'sessions', schema_version: 1 },
    ]);
  });

  it('two migrations at once: one creates, the other finds the tables (an advisory lock orders them)', async () => {
    const schema = await freshSchema(false);
    const [a, b] = await Promise.all([migratePostgres(url, { schema }), migratePostgres(url, { schema })]);
    expect([a[0]!.from, b[0]!.from].sort()).toEqual([3, undefined]);
    expect((await tables(schema)).length).toBe(9);
  });

  it('upgrades checkpoint layout 1 to 3 (adds the message and event tables, then wake_at) and keeps the stored runs', async () => {
    const schema = await freshSchema(false);
    await migratePostgres(url, { schema });
    const store = new PostgresCheckpointStore(url, { schema });
    await store.append('r1', [input()], head());
    // Layout 1 is layout 3 without the cluster tables and wake_at.
    await enqueueRun(store, { runId: 'j1', agent: 'a', input: 'q' });
    await store.append('j1', [input()], head());
    await enqueueRun(store, { runId: 'j2', agent: 'a', input: 'q' });
    await adminQuery(`DROP TABLE "${schema}".troupe_messages, "${schema}".troupe_events`);
    await adminQuery(`ALTER TABLE "${schema}".troupe_jobs DROP COLUMN started_at`);
    await adminQuery(`ALTER TABLE "${schema}".troupe_runs DROP COLUMN wake_at`);
    await adminQuery(`UPDATE "${schema}".troupe_meta SET schema_version = 1 WHERE component = 'checkpoints'`);
    const fresh = new PostgresCheckpointStore(url, { schema });
    await expectRejects(
      () => fresh.load('r1'),
      UserError,
      `PostgreSQL checkpoint store '${shownUrl(url)}' schema '${schema}' uses 'checkpoints' table layout version 1, but this version of troupe needs 3: run \`troupe db migrate --db '${shownUrl(url)}' --schema ${schema}\` to upgrade it.`,
    );
    expect(await migratePostgres(url, { schema })).toEqual([
      { component: 'checkpoints', from: 1, to: 3 },
      { component: 'sessions', from: 1, to: 1 },
    ]);
    expect(await tables(schema)).toContain('troupe_messages');
    expect(await tables(schema)).toContain('troupe_events');
    // Jobs whose run had started are marked started; the others wait in the queue.
    expect(await adminQuery(`SELECT run_id, started_at IS NOT NULL AS started FROM "${schema}".troupe_jobs ORDER BY run_id`)).toEqual([
      { run_id: 'j1', started: true },
      { run_id: 'j2', started: false },
    ]);
    expect((await store.load('r1'))?.entries).toEqual([input()]);
    await Promise.all([store.close(), fresh.close()]);
  });

  it('upgrades checkpoint layout 2 to 3: a run suspended before gets the due time of its open timer from its log', async () => {
    const schema = await freshSchema(false);
    await migratePostgres(url, { schema });
    const store = new PostgresCheckpointStore(url, { schema });
    const napping: CheckpointEntry = { kind: 'wait_request', waitId: 'n:1.0', waitKind: 'timer', turn: 1, index: 0, callId: 'c1', tool: 'nap', detail: { until: 5000 }, requestedAt: 10, deadline: 5000 };
    const asking: CheckpointEntry = { kind: 'wait_request', waitId: 'q:1.0', waitKind: 'question', turn: 1, index: 0, callId: 'c1', tool: 'ask', detail: { question: 'Why?', multiSelect: false }, requestedAt: 10 };
    // An old timer of a finished turn does not count; the open one does.
    await store.append('n', [input(), reply(1, ['c0']), { ...napping, waitId: 'n:1.1', callId: 'c0', deadline: 1 }, result(1, 'c0'), turnEnd(1), reply(2, ['c1']), { ...napping, turn: 2, waitId: 'n:2.0' }], head({ turn: 2, status: 'suspended' }));
    await store.append('q', [input(), reply(1, ['c1']), asking], head({ turn: 1, status: 'suspended' }));
    await store.append('r', [input()], head());
    await adminQuery(`ALTER TABLE "${schema}".troupe_runs DROP COLUMN wake_at`);
    await adminQuery(`UPDATE "${schema}".troupe_meta SET schema_version = 2 WHERE component = 'checkpoints'`);
    expect(await migratePostgres(url, { schema })).toEqual([
      { component: 'checkpoints', from: 2, to: 3 },
      { component: 'sessions', from: 1, to: 1 },
    ]);
    expect(await adminQuery(`SELECT run_id, wake_at FROM "${schema}".troupe_runs ORDER BY run_id`)).toEqual([
      { run_id: 'n', wake_at: '5000' },
      { run_id: 'q', wake_at: null },
      { run_id: 'r', wake_at: null },
    ]);
    await store.close();
  });

  it('refuses a schema of a newer layout and changes nothing', async () => {
    const schema = await freshSchema();
    await adminQuery(`UPDATE "${schema}".troupe_meta SET schema_version = 2 WHERE component = 'sessions'`);
    await expectRejects(
      () => migratePostgres(url, { schema }),
      UserError,
      `PostgreSQL schema '${schema}' uses 'sessions' table layout version 2, but this version of troupe reads only up to 1; upgrade troupe to load it.`,
    );
    expect(await adminQuery(`SELECT component, schema_version FROM "${schema}".troupe_meta ORDER BY component`)).toEqual([
      { component: 'checkpoints', schema_version: 3 },
      { component: 'sessions', schema_version: 2 },
    ]);
  });

  it('refuses a schema name that is not a plain identifier', async () => {
    await expectRejects(
      () => migratePostgres(url, { schema: 'a"; DROP' }),
      UserError,
      'A PostgreSQL schema name must be lower-case letters, digits and underscores (starting with a letter or underscore, at most 63), got "a\\"; DROP".',
    );
    expect(() => new PostgresCheckpointStore(url, { schema: 'Upper' })).toThrow(UserError);
  });
});
