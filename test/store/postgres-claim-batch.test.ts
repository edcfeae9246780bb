import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { enqueueRun } from '../../src/store/postgres-queue.js';
import { POSTGRES_URL, adminQuery, expectRejects, lease, manualClock, usePostgresSchema } from './harnesses.js';
import { head, input } from './store-helpers.js';

describe('PostgresCheckpointStore.claimBatch (a worker fills its free slots in one claim)', () => {
  const freshSchema = usePostgresSchema();
  const stores: PostgresCheckpointStore[] = [];
  const open = (schema: string, now: () => number) => {
    const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema, now });
    stores.push(store);
    return store;
  };
  const leases = (schema: string) => adminQuery<{ run_id: string; owner: string; expires_at: string }>(`SELECT run_id, owner, expires_at FROM "${schema}".troupe_leases ORDER BY run_id`);

  it('takes k runs in one transaction: stored runs needing a process first, then enqueued ones in order, each leased', async () => {
    const schema = await freshSchema();
    const clock = manualClock(0);
    const store = open(schema, clock.now);
    try {
      await store.append('crashed', [input()], head({ agent: 'specialist' }));
      await store.claim('crashed', 'dead-worker', 10);
      await store.append('held', [input()], head());
      await store.claim('held', 'live-worker', 10_000);
      for (const id of ['q1', 'q2', 'q3']) await enqueueRun(store, { runId: id, agent: 'triage', input: `hello ${id}` });
      clock.set(500);
      expect(await store.claimBatch('w1', 100, 3)).toEqual([
        { runId: 'crashed', lease: lease('crashed', 'w1', 600), agent: 'specialist' },
        { runId: 'q1', lease: lease('q1', 'w1', 600), agent: 'triage', input: 'hello q1' },
        { runId: 'q2', lease: lease('q2', 'w1', 600), agent: 'triage', input: 'hello q2' },
      ]);
      expect(await leases(schema)).toEqual([
        { run_id: 'crashed', owner: 'w1', expires_at: '600' },
        { run_id: 'held', owner: 'live-worker', expires_at: '10000' },
        { run_id: 'q1', owner: 'w1', expires_at: '600' },
        { run_id: 'q2', owner: 'w1', expires_at: '600' },
      ]);
      // Fewer runs than slots: it takes what there is; then nothing.
      expect(await store.claimBatch('w2', 100, 4)).toEqual([{ runId: 'q3', lease: lease('q3', 'w2', 600), agent: 'triage', input: 'hello q3' }]);
      expect(await store.claimBatch('w2', 100, 4)).toEqual([]);
      // claimNext is a claim of one.
      await enqueueRun(store, { runId: 'q4', agent: 'triage', input: 'hi' });
      expect(await store.claimNext('w3', 100)).toEqual({ runId: 'q4', lease: lease('q4', 'w3', 600), agent: 'triage', input: 'hi' });
      await expectRejects(() => store.claimBatch('w1', 100, 0), UserError, 'A claim takes a positive integer number of runs, got 0.');
      await expectRejects(() => store.claimBatch('w1', 100, 1.5), UserError, 'A claim takes a positive integer number of runs, got 1.5.');
      await expectRejects(() => store.claimBatch('', 100, 2), UserError, 'A lease owner must be a non-empty string, got "".');
    } finally {
      for (const s of stores.splice(0)) await s.close();
    }
  });

  it('a claim that fails part-way leases none of its runs (one transaction)', async () => {
    const schema = await freshSchema();
    const clock = manualClock(0);
    const store = open(schema, clock.now);
    try {
      await store.append('stored', [input()], head());
      for (const id of ['j1', 'j2', 'j3']) await enqueueRun(store, { runId: id, agent: 'triage', input: id });
      // The third candidate is corrupt: the claim reads it after leasing 'stored' and 'j1'.
      await adminQuery(`UPDATE "${schema}".troupe_jobs SET input = '{"no":1}' WHERE run_id = 'j2'`);
      await expectRejects(() => store.claimBatch('w1', 100, 3), UserError, `${store.where}: job 'j2' is corrupt: its input must be a string or a non-empty array of messages.`);
      expect(await leases(schema)).toEqual([]);
      // Two slots stop before the corrupt job: both are leased.
      expect((await store.claimBatch('w1', 100, 2)).map((run) => run.runId)).toEqual(['stored', 'j1']);
      expect((await leases(schema)).map((row) => row.run_id)).toEqual(['j1', 'stored']);
    } finally {
      for (const s of stores.splice(0)) await s.close();
    }
  });

  it('workers claiming batches at once (each its own connection pool) take every run exactly once', async () => {
    const schema = await freshSchema();
    const clock = manualClock(0);
    const workers = [open(schema, clock.now), open(schema, clock.now), open(schema, clock.now)];
    try {
      const stored = Array.from({ length: 20 }, (_, i) => `stored-${String(i).padStart(2, '0')}`);
      const queued = Array.from({ length: 40 }, (_, i) => `queued-${String(i).padStart(2, '0')}`);
      for (const id of stored) await workers[0]!.append(id, [input(id)], head());
      for (const id of queued) await enqueueRun(workers[0]!, { runId: id, agent: 'triage', input: id });
      const taken = await Promise.all(
        workers.map(async (worker, w) => {
          const mine: string[] = [];
          for (let batch = await worker.claimBatch(`w${w}`, 10_000, 4); batch.length > 0; batch = await worker.claimBatch(`w${w}`, 10_000, 4)) {
            expect(batch.length).toBeLessThanOrEqual(4);
            mine.push(...batch.map((run) => run.runId));
          }
          return mine;
        }),
      );
      expect(taken.flat().sort()).toEqual([...queued, ...stored]);
      const owners = new Map((await leases(schema)).map((row) => [row.run_id, row.owner]));
      expect(owners.size).toBe(60);
      taken.forEach((mine, w) => mine.forEach((id) => expect(owners.get(id)).toBe(`w${w}`)));
    } finally {
      for (const s of stores.splice(0)) await s.close();
    }
  });
});
