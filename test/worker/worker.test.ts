import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckpointEntry, StoredRunStatus } from '../../src/store/checkpoint-store.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { enqueueRun } from '../../src/store/postgres-queue.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { POSTGRES_URL, usePostgresSchema } from '../store/harnesses.js';
import { calc, slow, slowResumed } from './agents.js';

/** What a run's log looks like, compactly: kind, and the call id for results. */
const shape = (entries: readonly CheckpointEntry[]) => entries.map((e) => (e.kind === 'result' ? `result:${(e.message as { callId: string }).callId}` : e.kind));

/** Polls `check` until it returns a value (the store is the truth; no timing is asserted). */
async function until<T>(check: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe(`troupe worker on PostgreSQL`, () => {
  const freshSchema = usePostgresSchema();
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });
  const openStore = (schema: string) => {
    const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema });
    cleanup.push(() => store.close());
    return store;
  };
  const allStatuses = async (store: PostgresCheckpointStore, count: number, status: StoredRunStatus) => {
    const runs = await store.list({ status });
    return runs.length === count ? runs : undefined;
  };

  it('two workers run six enqueued runs, each exactly once, to completion', async () => {
    const schema = await freshSchema();
    const store = openStore(schema);
    const ids = ['j1', 'j2', 'j3', 'j4', 'j5', 'j6'];
    for (const runId of ids) await enqueueRun(store, { runId, agent: 'calc', input: `job ${runId}` });
    const workers: Worker[] = [0, 1].map((i) => startWorker({ store: openStore(schema), agents: { calc }, concurrency: 2, pollMs: 10, owner: `w${i}` }));
    cleanup.push(() => Promise.all(workers.map((w) => w.stop())).then(() => undefined));
    await until(() => allStatuses(store, 6, 'completed'));
    // A run's head says completed before its worker releases the lease: stop() waits for that.
    await Promise.all(workers.map((w) => w.stop()));
    const done = await store.list();
    expect(done.map((r) => [r.runId, r.head.output, r.lease]).sort()).toEqual(ids.map((id) => [id, 'done', undefined]));
    expect(workers.flatMap((w) => w.finished).sort()).toEqual(ids);
    for (const id of ids) {
      const run = (await store.load(id))!;
      expect(shape(run.entries).slice(0, 2)).toEqual(['input', 'reply']);
      expect(shape(run.entries).slice(2, 4).sort()).toEqual(['result:c1', 'result:c2']);
      expect(shape(run.entries).slice(4)).toEqual(['turn_end', 'reply', 'turn_end']);
      expect(run.entries[0]).toEqual({ kind: 'input', message: { role: 'user', content: `job ${id}` } });
    }
  });

  it('a worker process killed mid-run loses the run when its lease expires; another worker resumes it from the log', async () => {
    const schema = await freshSchema();
    const store = openStore(schema);
    const dir = mkdtempSync(join(tmpdir(), 'troupe-worker-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const execLog = join(dir, 'executions.log');
    writeFileSync(execLog, '');
    await enqueueRun(store, { runId: 'k1', agent: 'slow', input: 'go' });
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'worker', '--db', POSTGRES_URL!, '--schema', schema, '--agents', 'test/worker/agents.ts', '--lease-ttl', '1500', '--poll', '20'],
      { env: { ...process.env, TROUPE_TEST_EXEC_LOG: execLog, TROUPE_TEST_HANG: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    cleanup.push(() => void child.kill('SIGKILL'));
    // The addition's result is stored while the wait still hangs: kill the worker there.
    const stored = await until(async () => {
      const run = await store.load('k1');
      return run && shape(run.entries).includes('result:a1') && readFileSync(execLog, 'utf8').includes('w1') ? run : undefined;
    });
    expect(shape(stored.entries)).toEqual(['input', 'reply', 'result:a1']);
    expect(stored.lease?.owner).toMatch(/^worker:/);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(output).toContain('run k1: starting on slow');

    // This process's tools record into the same file.
    process.env.TROUPE_TEST_EXEC_LOG = execLog;
    cleanup.push(() => void delete process.env.TROUPE_TEST_EXEC_LOG);
    const survivor = startWorker({ store: openStore(schema), agents: { slow: slowResumed }, pollMs: 20, leaseTtlMs: 1500, owner: 'survivor' });
    cleanup.push(() => survivor.stop());
    const [done] = await until(() => allStatuses(store, 1, 'completed'));
    await survivor.stop();
    expect(done!.head.output).toBe('done');
    expect(survivor.finished).toEqual(['k1']);
    const run = (await store.load('k1'))!;
    expect(shape(run.entries)).toEqual(['input', 'reply', 'result:a1', 'result:w1', 'turn_end', 'reply', 'turn_end']);
    // The stored result's tool ran once; the call in flight at the kill ran again (at least once).
    expect(readFileSync(execLog, 'utf8').split('\n').filter(Boolean).sort()).toEqual(['a1', 'w1', 'w1']);
  });

  it('a worker without the run’s agent leaves it for one that has it', async () => {
    const schema = await freshSchema();
    const store = openStore(schema);
    await enqueueRun(store, { runId: 'x1', agent: 'calc', input: 'q' });
    const lines: string[] = [];
    const wrong = startWorker({ store: openStore(schema), agents: { slow }, pollMs: 10, leaseTtlMs: 200, owner: 'wrong', log: (l) => lines.push(l) });
    await until(async () => (lines.length > 0 ? true : undefined));
    await wrong.stop();
    expect(lines[0]).toBe("run x1: agent 'calc' is not in this worker's agents (slow); left for another worker");
    expect(await store.load('x1')).toBeUndefined();
    const right = startWorker({ store: openStore(schema), agents: { calc }, pollMs: 10, owner: 'right' });
    cleanup.push(() => right.stop());
    await until(() => allStatuses(store, 1, 'completed'));
    await right.stop();
    expect(right.finished).toEqual(['x1']);
  });

  it('a run whose agent factory throws keeps its lease until it runs out, so it is retried then and not claimed again at once', async () => {
    const schema = await freshSchema();
    const store = openStore(schema);
    await enqueueRun(store, { runId: 'f1', agent: 'calc', input: 'q' });
    const lines: string[] = [];
    const broken = () => {
      throw new Error('factory broke');
    };
    const worker = startWorker({ store: openStore(schema), agents: { calc: broken }, pollMs: 10, leaseTtlMs: 60_000, owner: 'broken', log: (l) => lines.push(l) });
    cleanup.push(() => worker.stop());
    await until(async () => (lines.length > 0 ? true : undefined));
    await worker.stop();
    expect(lines).toEqual(['run f1: could not run (factory broke); retried once its lease runs out (60000 ms)']);
    const saved = await store.list();
    expect(saved).toEqual([]);
    expect((await store.claim('f1', 'other', 1_000).catch((e: unknown) => (e as Error).name))).toBe('RunLocked');
  });

  it('a worker with k free slots fills them with one claim of k runs', async () => {
    const schema = await freshSchema();
    const store = openStore(schema);
    const ids = ['b1', 'b2', 'b3', 'b4'];
    for (const runId of ids) await enqueueRun(store, { runId, agent: 'calc', input: `job ${runId}` });
    /** The real store, recording what each claim asked for and took. */
    class CountingStore extends PostgresCheckpointStore {
      readonly claims: Array<{ max: number; taken: string[] }> = [];
      override async claimBatch(owner: string, ttlMs: number, max: number) {
        const taken = await super.claimBatch(owner, ttlMs, max);
        this.claims.push({ max, taken: taken.map((run) => run.runId) });
        return taken;
      }
    }
    const counting = new CountingStore(POSTGRES_URL!, { schema });
    cleanup.push(() => counting.close());
    const worker = startWorker({ store: counting, agents: { calc }, concurrency: 3, pollMs: 10, owner: 'w' });
    cleanup.push(() => worker.stop());
    await until(() => allStatuses(store, 4, 'completed'));
    await worker.stop();
    expect(counting.claims[0]).toEqual({ max: 3, taken: ['b1', 'b2', 'b3'] });
    expect(counting.claims.flatMap((claim) => claim.taken)).toEqual(ids);
    expect([...worker.finished].sort()).toEqual(ids);
  });
});
