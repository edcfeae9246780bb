/**
 * Two transactions that lock the same run's rows in opposite orders deadlock, and PostgreSQL
 * aborts one ("deadlock detected"): in the scale-out test a worker's checkpoint write failed
 * that way and its run ended run_failed. These tests hold one transaction at a chosen point
 * with a third connection (the gate: a row lock the write must wait for), start the other,
 * then open the gate, so the interleaving that deadlocked is the one that happens.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { enqueueRun } from '../../src/store/postgres-queue.js';
import { POSTGRES_URL, lease, manualClock, usePostgresSchema } from './harnesses.js';
import { head, input, reply } from './store-helpers.js';

/** Resolves once `check` returns true (polled; the condition is awaited, never a fixed wait). */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Whether a backend of `applicationName` is waiting for a lock. */
async function waitingForLock(admin: pg.Client, applicationName: string): Promise<boolean> {
  const rows = await admin.query("SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [applicationName]);
  return rows.rows.length > 0;
}

/** How a promise ended, without throwing. */
function settle<T>(promise: Promise<T>): { readonly done: () => boolean; readonly result: Promise<{ ok: true; value: T } | { ok: false; error: string }> } {
  let done = false;
  const result = promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error: (error as Error).message }),
  );
  void result.finally(() => (done = true));
  return { done: () => done, result };
}

describe('PostgreSQL lock order (no "deadlock detected" between writers and claims)', () => {
  const freshSchema = usePostgresSchema();
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  const open = (schema: string, applicationName: string, now: () => number) => {
    const store = new PostgresCheckpointStore({ connectionString: POSTGRES_URL, applicationName }, { schema, now });
    closers.push(() => store.close());
    return store;
  };
  const client = async () => {
    const c = new pg.Client({ connectionString: POSTGRES_URL });
    await c.connect();
    closers.push(() => c.end());
    return c;
  };

  it("a worker's late write and another worker's claim of the same run: the claim skips the run, the write lands, the next claim takes it", async () => {
    const schema = await freshSchema();
    const app = `lock-order-${schema}`;
    const clock = manualClock(0);
    const slow = open(schema, `${app}-slow`, clock.now);
    const claimer = open(schema, `${app}-claimer`, clock.now);
    await slow.append('r', [input()], head());
    await slow.claim('r', 'slow-worker', 100);
    // The slow worker's lease ran out (it renewed too late on a loaded machine), but nobody took
    // the run yet, so its fence still accepts its write; another worker sees an expired lease.
    clock.set(500);
    const admin = await client();
    const gate = await client();
    await gate.query('BEGIN');
    // The gate holds the lease row: the write stops at its fence check (its lease lock), after
    // whatever it locks before it; the claim, if it gets that far, queues behind the write.
    await gate.query(`SELECT 1 FROM "${schema}".troupe_leases WHERE run_id = 'r' FOR UPDATE`);
    const write = settle(slow.append('r', [reply(1, [])], head({ turn: 1 }), { owner: 'slow-worker', seq: 1 }));
    await until(() => waitingForLock(admin, `${app}-slow`));
    const claim = settle(claimer.claimNext('fast-worker', 100));
    // The claim either ends (it skipped the run being written) or waits for the lease.
    await until(async () => claim.done() || (await waitingForLock(admin, `${app}-claimer`)));
    await gate.query('ROLLBACK');
    expect([await claim.result, await write.result]).toEqual([
      { ok: true, value: undefined },
      { ok: true, value: undefined },
    ]);
    expect((await slow.load('r'))?.entries.map((e) => e.kind)).toEqual(['input', 'reply']);
    // Written and committed: the expired lease is free for the next claim.
    expect(await claimer.claimNext('fast-worker', 100)).toEqual({ runId: 'r', lease: lease('r', 'fast-worker', 600), agent: 'a' });
  });

  it("an enqueued run's first write and another worker's claim of its job: the claim skips the job, the write lands", async () => {
    const schema = await freshSchema();
    const app = `lock-order-${schema}`;
    const clock = manualClock(0);
    const slow = open(schema, `${app}-slow`, clock.now);
    const claimer = open(schema, `${app}-claimer`, clock.now);
    await enqueueRun(slow, { runId: 'q', agent: 'triage', input: 'hello' });
    expect(await slow.claimNext('slow-worker', 100)).toEqual({ runId: 'q', lease: lease('q', 'slow-worker', 100), agent: 'triage', input: 'hello' });
    clock.set(500);
    const admin = await client();
    const gate = await client();
    await gate.query('BEGIN');
    await gate.query(`SELECT 1 FROM "${schema}".troupe_leases WHERE run_id = 'q' FOR UPDATE`);
    const write = settle(slow.append('q', [input('hello')], head({ agent: 'triage' }), { owner: 'slow-worker', seq: 0 }));
    await until(() => waitingForLock(admin, `${app}-slow`));
    const claim = settle(claimer.claimNext('fast-worker', 100));
    await until(async () => claim.done() || (await waitingForLock(admin, `${app}-claimer`)));
    await gate.query('ROLLBACK');
    expect([await claim.result, await write.result]).toEqual([
      { ok: true, value: undefined },
      { ok: true, value: undefined },
    ]);
    // Started: the next claim finds a stored run (its lease ran out), no longer a job to start.
    expect(await claimer.claimNext('fast-worker', 100)).toEqual({ runId: 'q', lease: lease('q', 'fast-worker', 600), agent: 'triage' });
  });

  it('two group commits naming the same two runs in opposite orders both commit', async () => {
    const schema = await freshSchema();
    const app = `lock-order-${schema}`;
    const clock = manualClock(0);
    const first = open(schema, `${app}-first`, clock.now);
    const second = open(schema, `${app}-second`, clock.now);
    await first.append('a', [input()], head());
    await first.append('b', [input()], head());
    const admin = await client();
    const gate = await client();
    await gate.query('BEGIN');
    // The first batch writes run 'a' first and stops at its entry 2, holding a's writer lock.
    await gate.query(`INSERT INTO "${schema}".troupe_entries (run_id, seq, kind, data) VALUES ('a', 2, 'gate', '{}')`);
    const one = settle(first.appendBatch([
      { runId: 'a', entries: [reply(1, [])], head: head({ turn: 1 }) },
      { runId: 'b', entries: [reply(1, [])], head: head({ turn: 1 }) },
    ]));
    await until(() => waitingForLock(admin, `${app}-first`));
    const two = settle(second.appendBatch([
      { runId: 'b', entries: [reply(2, [])], head: head({ turn: 2 }) },
      { runId: 'a', entries: [reply(2, [])], head: head({ turn: 2 }) },
    ]));
    await until(async () => two.done() || (await waitingForLock(admin, `${app}-second`)));
    await gate.query('ROLLBACK');
    expect([await one.result, await two.result]).toEqual([
      { ok: true, value: [undefined, undefined] },
      { ok: true, value: [undefined, undefined] },
    ]);
    for (const runId of ['a', 'b']) {
      expect((await first.load(runId))?.entries.map((e) => ('turn' in e ? `${e.kind}@${e.turn}` : e.kind))).toEqual(['input', 'reply@1', 'reply@2']);
    }
  });
});
