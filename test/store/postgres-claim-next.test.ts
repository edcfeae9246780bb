import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import type { CheckpointEntry } from '../../src/store/checkpoint-store.js';
import { CHECKPOINT_SCHEMA_VERSION } from '../../src/store/format.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { enqueueRun } from '../../src/store/postgres-queue.js';
import { POSTGRES_URL, adminQuery, expectRejects, lease, manualClock, usePostgresSchema } from './harnesses.js';
import { head, input, reply, turnEnd } from './store-helpers.js';

const HASH = 'b'.repeat(64);
const request: CheckpointEntry = { kind: 'approval_request', turn: 1, index: 0, callId: 'c1', approvalId: 'x:1.0', tool: 'pay', argsHash: HASH, requestedAt: 1 };
const claimedRun = (runId: string, owner: string, expiresAt: number) => ({ runId, lease: lease(runId, owner, expiresAt), agent: 'a' });
const decision: CheckpointEntry = { kind: 'approval_decision', approvalId: 'x:1.0', callId: 'c1', argsHash: HASH, approved: true, decidedAt: 2 };

describe(`PostgresCheckpointStore.claimNext (workers)`, () => {
  const freshSchema = usePostgresSchema();
  const stores: PostgresCheckpointStore[] = [];
  const open = (schema: string, now: () => number) => {
    const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema, now });
    stores.push(store);
    return store;
  };

  it('takes the oldest run that needs a process: running without a live lease, or suspended with a decision since', async () => {
    const schema = await freshSchema();
    const clock = manualClock(0);
    const store = open(schema, clock.now);
    try {
      await store.append('done', [input(), turnEnd(0)], head({ status: 'completed' }));
      await store.append('fresh', [input()], head());
      await store.append('parked', [input(), reply(1, ['c1']), request], head({ turn: 1, status: 'suspended' }));
      await store.append('decided', [input(), reply(1, ['c1']), request], head({ turn: 1, status: 'suspended' }));
      await store.append('decided', [decision], head({ turn: 1, status: 'suspended' }));
      await store.append('held', [input()], head());
      await store.claim('held', 'other', 1000);
      await store.append('crashed', [input()], head());
      await store.claim('crashed', 'dead-worker', 10);
      await store.append('failed', [], head({ status: 'failed', error: { name: 'E', message: 'm' } }));
      clock.set(500);
      const claimed: unknown[] = [];
      for (let i = 0; i < 4; i++) claimed.push(await store.claimNext('w1', 100));
      expect(claimed).toEqual([claimedRun('fresh', 'w1', 600), claimedRun('decided', 'w1', 600), claimedRun('crashed', 'w1', 600), undefined]);
      // A decided run that suspends again waits for a new decision.
      await store.append('decided', [reply(2, ['c2'])], head({ turn: 2, status: 'running' }), { owner: 'w1', seq: 4 });
      await store.append('decided', [], head({ turn: 2, status: 'suspended' }), { owner: 'w1', seq: 5 });
      await store.release('decided', 'w1');
      expect(await store.claimNext('w2', 100)).toBeUndefined();
      await store.append('decided', [{ ...decision, approvalId: 'x:2.0', callId: 'c2' }], head({ turn: 2, status: 'suspended' }));
      expect(await store.claimNext('w2', 100)).toEqual(claimedRun('decided', 'w2', 600));
      // Runs of a newer record format are left to a newer troupe.
      await store.append('future', [input()], head());
      await adminQuery(`UPDATE "${schema}".troupe_runs SET schema_version = ${CHECKPOINT_SCHEMA_VERSION + 1} WHERE run_id = 'future'`);
      expect(await store.claimNext('w2', 100)).toBeUndefined();
      await expectRejects(() => store.claimNext('', 100), UserError, 'A lease owner must be a non-empty string, got "".');
    } finally {
      for (const s of stores.splice(0)) await s.close();
    }
  });

  it('enqueued runs come after stored ones, in enqueue order, with their agent and input; a started one is a stored run', async () => {
    const schema = await freshSchema();
    const clock = manualClock(0);
    const store = open(schema, clock.now);
    try {
      await enqueueRun(store, { runId: 'q1', agent: 'triage', input: 'first' });
      await enqueueRun(store, { runId: 'q2', agent: 'triage', input: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'second' }] });
      await store.append('crashed', [input()], head({ agent: 'specialist' }));
      await expectRejects(() => enqueueRun(store, { runId: 'q1', agent: 'triage', input: 'again' }), UserError, "Cannot enqueue run 'q1': a run with that id is already stored or enqueued; use a new run id.");
      await expectRejects(() => enqueueRun(store, { runId: 'crashed', agent: 'triage', input: 'x' }), UserError, "Cannot enqueue run 'crashed': a run with that id is already stored or enqueued; use a new run id.");
      await expectRejects(() => enqueueRun(store, { runId: 'q3', agent: 'triage', input: [] }), UserError, "Cannot enqueue run 'q3': input must be a string or a non-empty array of messages.");
      await expectRejects(() => enqueueRun(store, { runId: 'q3', agent: '', input: 'x' }), UserError, `Cannot enqueue run 'q3': agent must be a non-empty agent name, got "".`);
      expect(await store.claimNext('w', 100)).toEqual({ runId: 'crashed', lease: lease('crashed', 'w', 100), agent: 'specialist' });
      expect(await store.claimNext('w', 100)).toEqual({ runId: 'q1', lease: lease('q1', 'w', 100), agent: 'triage', input: 'first' });
      // The worker starts q1: its log now exists, and its job still names the agent it started with.
      await store.append('q1', [input('first')], head({ agent: 'specialist' }), { owner: 'w', seq: 0 });
      expect(await store.claimNext('w', 100)).toEqual({
        runId: 'q2',
        lease: lease('q2', 'w', 100),
        agent: 'triage',
        input: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'second' }],
      });
      expect(await store.claimNext('w', 100)).toBeUndefined();
      clock.set(100);
      expect((await store.claimNext('other', 100))?.runId).toBe('crashed');
      expect(await store.claimNext('other', 100)).toEqual({ runId: 'q1', lease: lease('q1', 'other', 200), agent: 'triage' });
      expect(await store.claimNext('other', 100)).toEqual({ runId: 'q2', lease: lease('q2', 'other', 200), agent: 'triage', input: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'second' }] });
      // delete removes the job too: the id can be enqueued again.
      expect(await store.delete('q2')).toBe(false);
      await enqueueRun(store, { runId: 'q2', agent: 'triage', input: 'anew' });
      await adminQuery(`UPDATE "${schema}".troupe_jobs SET input = '{"no":1}' WHERE run_id = 'q2'`);
      clock.set(300);
      await store.claimNext('x', 100);
      await store.claimNext('x', 100);
      await expectRejects(() => store.claimNext('x', 100), UserError, `${store.where}: job 'q2' is corrupt: its input must be a string or a non-empty array of messages.`);
    } finally {
      for (const s of stores.splice(0)) await s.close();
    }
  });

  it('a job stays claimable until its run stores something (a worker that died right after claiming loses nothing), then leaves the queue; sub-run logs are never claimed', async () => {
    const schema = await freshSchema();
    const clock = manualClock(0);
    const store = open(schema, clock.now);
    try {
      await enqueueRun(store, { runId: 'j1', agent: 'calc', input: 'first' });
      await enqueueRun(store, { runId: 'j2', agent: 'calc', input: 'second' });
      // A dead parent's sub-run log: its parent resumes it, no worker takes it alone.
      await store.append('parent/1.0', [input()], head());
      expect(await store.claimNext('dies', 100)).toEqual({ ...claimedRun('j1', 'dies', 100), agent: 'calc', input: 'first' });
      clock.set(200);
      // Its lease ran out before it stored anything: the next worker starts the job afresh.
      expect(await store.claimNext('w2', 100)).toEqual({ ...claimedRun('j1', 'w2', 300), agent: 'calc', input: 'first' });
      await store.append('j1', [input('first')], head(), { owner: 'w2', seq: 0 });
      expect((await store.listQueued()).map((job) => job.runId)).toEqual(['j2']);
      expect(await adminQuery(`SELECT run_id, started_at FROM "${schema}".troupe_jobs ORDER BY run_id`)).toEqual([
        { run_id: 'j1', started_at: '200' },
        { run_id: 'j2', started_at: null },
      ]);
      expect(await store.claimNext('w3', 100)).toEqual({ ...claimedRun('j2', 'w3', 300), agent: 'calc', input: 'second' });
      clock.set(1_000);
      // j1 is running with an expired lease (its worker is gone): claimed as a stored run, with its job's agent.
      expect(await store.claimNext('w4', 100)).toEqual({ ...claimedRun('j1', 'w4', 1_100), agent: 'calc' });
      expect(await store.claimNext('w4', 100)).toEqual({ ...claimedRun('j2', 'w4', 1_100), agent: 'calc', input: 'second' });
      expect(await store.claimNext('w4', 100)).toBeUndefined();
    } finally {
      for (const s of stores.splice(0)) await s.close();
    }
  });

  it('three workers polling at once take every run exactly once (FOR UPDATE SKIP LOCKED)', async () => {
    const schema = await freshSchema();
    const clock = manualClock(0);
    const workers = [open(schema, clock.now), open(schema, clock.now), open(schema, clock.now)];
    try {
      const ids = Array.from({ length: 24 }, (_, i) => `run-${String(i).padStart(2, '0')}`);
      for (const id of ids) await workers[0]!.append(id, [input(id)], head());
      const taken = await Promise.all(
        workers.map(async (worker, w) => {
          const mine: string[] = [];
          for (let next = await worker.claimNext(`w${w}`, 10_000); next; next = await worker.claimNext(`w${w}`, 10_000)) mine.push(next.runId);
          return mine;
        }),
      );
      expect(taken.flat().sort()).toEqual(ids);
      const owners = new Map((await workers[0]!.list()).map((run) => [run.runId, run.lease?.owner]));
      taken.forEach((mine, w) => mine.forEach((id) => expect(owners.get(id)).toBe(`w${w}`)));
    } finally {
      for (const s of stores.splice(0)) await s.close();
    }
  });
});
