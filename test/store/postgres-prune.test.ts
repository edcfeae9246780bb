import { afterEach, describe, expect, it } from 'vitest';
import { EventsPruned, UserError } from '../../src/errors.js';
import type { WireRunEvent } from '../../src/inspect/wire.js';
import { PostgresRunBus } from '../../src/store/postgres-bus.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { pruneEvents } from '../../src/store/postgres-prune.js';
import { POSTGRES_URL, adminQuery, expectRejects, manualClock, usePostgresSchema } from './harnesses.js';
import { head, input, turnEnd } from './store-helpers.js';

const DAY = 86_400_000;
const events = (runId: string, n: number) => Array.from({ length: n }, (_, i) => ({ type: i === n - 1 ? 'run_completed' : 'turn_started', runId, turn: i }) as unknown as WireRunEvent);

describe('pruning stored run events (retention of troupe_events)', () => {
  const freshSchema = usePostgresSchema();
  const opened: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const item of opened.splice(0).reverse()) await item.close();
  });
  const open = (schema: string, now: () => number) => {
    const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema, now });
    const bus = new PostgresRunBus(POSTGRES_URL!, { schema, now });
    opened.push(store, bus);
    return { store, bus };
  };
  /** A run stored at `at` with `status` and `n` published events. */
  const seed = async (store: PostgresCheckpointStore, bus: PostgresRunBus, clock: ReturnType<typeof manualClock>, runId: string, at: number, status: 'completed' | 'failed' | 'cancelled' | 'running' | 'suspended', n: number) => {
    clock.set(at);
    await store.append(runId, [input(runId), turnEnd(0)], head({ status, ...(status === 'completed' ? { output: 'ok' } : {}), ...(status === 'failed' ? { error: { name: 'E', message: 'm' } } : {}) }));
    if (n > 0) await bus.publish(runId, events(runId, n));
  };
  const rowsOf = (schema: string) => adminQuery<{ run_id: string; type: string }>(`SELECT run_id, type FROM "${schema}".troupe_events ORDER BY id`);

  it('olderThan prunes finished root runs that finished that long ago; running, parked, leased and recent runs keep theirs; the dry run lists exactly the same', async () => {
    const schema = await freshSchema();
    const clock = manualClock(0);
    const { store, bus } = open(schema, clock.now);
    const now = 30 * DAY;
    await seed(store, bus, clock, 'old-done', now - 10 * DAY, 'completed', 3);
    await seed(store, bus, clock, 'old-failed', now - 9 * DAY, 'failed', 2);
    await seed(store, bus, clock, 'old-cancelled', now - 8 * DAY, 'cancelled', 1);
    await seed(store, bus, clock, 'old-running', now - 10 * DAY, 'running', 2);
    await seed(store, bus, clock, 'old-parked', now - 10 * DAY, 'suspended', 2);
    await seed(store, bus, clock, 'old-leased', now - 10 * DAY, 'completed', 2);
    await store.claim('old-leased', 'worker-still-publishing', 40 * DAY);
    await seed(store, bus, clock, 'recent', now - 6 * DAY, 'completed', 2);
    await seed(store, bus, clock, 'no-events', now - 10 * DAY, 'completed', 0);
    await seed(store, bus, clock, 'old-done/1.0', now - 10 * DAY, 'completed', 0);
    const logsBefore = await Promise.all(['old-done', 'old-failed', 'old-cancelled'].map((id) => store.load(id)));
    clock.set(now);
    const expected = [
      { runId: 'old-done', status: 'completed', finishedAt: now - 10 * DAY, events: 3 },
      { runId: 'old-failed', status: 'failed', finishedAt: now - 9 * DAY, events: 2 },
      { runId: 'old-cancelled', status: 'cancelled', finishedAt: now - 8 * DAY, events: 1 },
    ];
    expect(await bus.pruneEvents({ olderThan: '7d' }, { dryRun: true })).toEqual({ dryRun: true, runs: expected, events: 6 });
    expect((await rowsOf(schema)).length).toBe(14);
    const lastIds = await adminQuery<{ run_id: string; last: string }>(`SELECT run_id, max(id)::text AS last FROM "${schema}".troupe_events GROUP BY run_id ORDER BY run_id`);
    const lastOf = (runId: string) => Number(lastIds.find((row) => row.run_id === runId)!.last);
    expect(await bus.pruneEvents({ olderThan: '7d' })).toEqual({ dryRun: false, runs: expected, events: 6 });
    // Each pruned run keeps one marker row, with the id of its last event.
    expect(await adminQuery(`SELECT run_id, id::text, type, data FROM "${schema}".troupe_events WHERE type = 'troupe.events_pruned' ORDER BY id`)).toEqual(
      ['old-done', 'old-failed', 'old-cancelled'].map((runId) => ({ run_id: runId, id: String(lastOf(runId)), type: 'troupe.events_pruned', data: JSON.stringify({ type: 'troupe.events_pruned', runId, through: lastOf(runId), prunedAt: now }) })),
    );
    expect((await rowsOf(schema)).filter((row) => row.type !== 'troupe.events_pruned').map((row) => row.run_id)).toEqual(['old-running', 'old-running', 'old-parked', 'old-parked', 'old-leased', 'old-leased', 'recent', 'recent']);
    // Reading from before the marker is refused with where the truth is; from the marker on, reads go on.
    const pruned = await expectRejects(
      () => bus.events('old-done', 0),
      EventsPruned,
      `The events of run 'old-done' up to event ${lastOf('old-done')} were pruned at ${new Date(now).toISOString()} (event retention); its log and result are kept: read them with GET /api/runs/old-done or store.load('old-done').`,
    );
    expect([pruned.code, pruned.runId, pruned.through, pruned.prunedAt]).toEqual(['EVENTS_PRUNED', 'old-done', lastOf('old-done'), now]);
    await expectRejects(() => bus.events('old-done', lastOf('old-done') - 1), EventsPruned, pruned.message);
    expect(await bus.events('old-done', lastOf('old-done'))).toEqual([]);
    expect((await bus.events('recent', 0)).map((e) => e.event.type)).toEqual(['turn_started', 'run_completed']);
    // The logs are untouched; a second prune finds nothing.
    expect(await Promise.all(['old-done', 'old-failed', 'old-cancelled'].map((id) => store.load(id)))).toEqual(logsBefore);
    expect(await bus.pruneEvents({ olderThan: '7d' })).toEqual({ dryRun: false, runs: [], events: 0 });
  });

  it('keepLast keeps the runs that finished last; with olderThan too, a run goes only when both rules drop it', async () => {
    const schema = await freshSchema();
    const clock = manualClock(0);
    const { store, bus } = open(schema, clock.now);
    const now = 30 * DAY;
    for (const [i, id] of ['r1', 'r2', 'r3', 'r4', 'r5'].entries()) await seed(store, bus, clock, id, now - (10 - 2 * i) * DAY, 'completed', 1);
    clock.set(now);
    const ids = async (rule: Parameters<PostgresRunBus['pruneEvents']>[0]) => (await bus.pruneEvents(rule, { dryRun: true })).runs.map((run) => run.runId);
    // Finished 10, 8, 6, 4 and 2 days ago.
    expect(await ids({ keepLast: 2 })).toEqual(['r1', 'r2', 'r3']);
    expect(await ids({ keepLast: 0 })).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(await ids({ olderThan: '7d', keepLast: 4 })).toEqual(['r1']);
    expect(await ids({ olderThan: '5d', keepLast: 1 })).toEqual(['r1', 'r2', 'r3']);
    expect(await ids({ keepLast: 5 })).toEqual([]);
    expect((await bus.pruneEvents({ keepLast: 3 })).runs.map((run) => run.runId)).toEqual(['r1', 'r2']);
    // Pruned runs no longer count: the last three with events are still kept.
    expect(await ids({ keepLast: 3 })).toEqual([]);
    expect(await ids({ keepLast: 2 })).toEqual(['r3']);
  });

  it('pruners running at once (several workers) prune every run exactly once', async () => {
    const schema = await freshSchema();
    const clock = manualClock(0);
    const { store, bus } = open(schema, clock.now);
    const ids = Array.from({ length: 450 }, (_, i) => `run-${String(i).padStart(3, '0')}`);
    // Many runs at once: heads and events written with SQL (the prune reads only these columns).
    await adminQuery(
      `INSERT INTO "${schema}".troupe_runs (run_id, schema_version, agent, turn, status, usage, entry_count, created_at, updated_at)
       SELECT id, 5, 'a', 1, 'completed', '{}', 0, 1, 1 FROM unnest($1::text[]) AS id`,
      [ids],
    );
    await adminQuery(`INSERT INTO "${schema}".troupe_events (run_id, type, data, at) SELECT id, 'run_completed', '{}', 1 FROM unnest($1::text[]) AS id, generate_series(1, 2)`, [ids]);
    clock.set(DAY);
    const others = [open(schema, clock.now).bus, open(schema, clock.now).bus];
    const reports = await Promise.all([bus, ...others].map((pruner) => pruner.pruneEvents({ olderThan: '1h' })));
    const pruned = reports.flatMap((report) => report.runs.map((run) => run.runId));
    expect(pruned.sort()).toEqual(ids);
    expect(reports.reduce((sum, report) => sum + report.events, 0)).toBe(900);
    expect(await adminQuery(`SELECT count(*)::int AS n, count(DISTINCT run_id)::int AS runs FROM "${schema}".troupe_events WHERE type = 'troupe.events_pruned'`)).toEqual([{ n: 450, runs: 450 }]);
    expect(await adminQuery(`SELECT count(*)::int AS n FROM "${schema}".troupe_events WHERE type <> 'troupe.events_pruned'`)).toEqual([{ n: 0 }]);
    await store.close();
  });

  it('refuses a bad retention with a typed error and prunes nothing', async () => {
    const schema = await freshSchema();
    const clock = manualClock(0);
    const { store, bus } = open(schema, clock.now);
    await seed(store, bus, clock, 'done', 0, 'completed', 1);
    clock.set(DAY);
    await expectRejects(() => bus.pruneEvents({ olderThan: 'banana' }), UserError, 'pruneEvents.olderThan must be a duration such as 7d, 12h, 30m, 45s or 500ms, got "banana".');
    await expectRejects(() => bus.pruneEvents({ olderThan: '-1d' }), UserError, 'pruneEvents.olderThan must be a duration such as 7d, 12h, 30m, 45s or 500ms, got "-1d".');
    await expectRejects(() => bus.pruneEvents({ olderThan: -5 }), UserError, 'pruneEvents.olderThan must be a duration such as 7d, 12h, 30m, 45s or 500ms, got -5.');
    await expectRejects(() => bus.pruneEvents({}), UserError, 'pruneEvents needs olderThan and/or keepLast: which finished runs\' events to prune.');
    await expectRejects(() => bus.pruneEvents({ keepLast: -1 }), UserError, 'pruneEvents.keepLast must be a whole number of runs (0 or more), got -1.');
    await expectRejects(() => bus.pruneEvents({ olderThan: '1d', keep: 3 } as never), UserError, "Unknown pruneEvents option 'keep'; did you mean 'keepLast'? Expected one of olderThan, keepLast.");
    await expectRejects(() => pruneEvents(POSTGRES_URL!, { schema, olderThan: '1x' }), UserError, 'pruneEvents.olderThan must be a duration such as 7d, 12h, 30m, 45s or 500ms, got "1x".');
    expect((await bus.events('done', 0)).map((e) => e.event.type)).toEqual(['run_completed']);
  });
});
