/**
 * Parked runs resume on their own in a worker cluster: a run that parked at a wait (the
 * worker's `suspendOnWait`) is taken again by any worker once its signal or answer is stored
 * (`Runner.signal` / `Runner.answer` from another process) or its timer is due, also when the
 * worker that parked it is gone (the due time is in the store: `troupe_runs.wake_at`).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, askHuman, tool, waitForEvent, waitUntil } from '../../src/index.js';
import { ScriptedModel, batch, text } from '../../src/entry/testing.js';
import type { CheckpointEntry } from '../../src/store/checkpoint-store.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { enqueueRun } from '../../src/store/postgres-queue.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { POSTGRES_URL, adminQuery, usePostgresSchema } from '../store/harnesses.js';

const kinds = (entries: readonly CheckpointEntry[]) => entries.map((e) => e.kind);

async function until<T>(check: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** When the `nap` tool's timer is due: set by the test before the run starts. */
let napUntil = 0;
const executions: string[] = [];

const nap = tool({
  name: 'nap',
  description: 'Waits until a given time.',
  parameters: z.object({}),
  execute: async (_args, ctx) => {
    executions.push(ctx.callId);
    return waitUntil(napUntil);
  },
});
const pay = tool({
  name: 'pay',
  description: 'Starts a payment and waits for its confirmation.',
  parameters: z.object({}),
  execute: async (_args, ctx) => {
    executions.push(ctx.callId);
    return waitForEvent('paid');
  },
});
const ask = askHuman({ name: 'ask' });
const refund = tool({
  name: 'refund',
  description: 'Refunds an order (a person approves it).',
  parameters: z.object({}),
  needsApproval: true,
  execute: async (_args, ctx) => {
    executions.push(ctx.callId);
    return 'refunded';
  },
});

// One instance per test, shared by its workers: a resumed run asks the same scripted model for its next reply.
const napper = () => new Agent({ name: 'napper', model: new ScriptedModel([batch([['nap', {}, 'n1']]), text('rested')]), tools: [nap] });
const payer = () => new Agent({ name: 'payer', model: new ScriptedModel([batch([['pay', {}, 'p1']]), text('paid')]), tools: [pay] });
const refunder = () => new Agent({ name: 'refunder', model: new ScriptedModel([batch([['refund', {}, 'r1']]), text('not refunded')]), tools: [refund] });
const asker = () => new Agent({ name: 'asker', model: new ScriptedModel([batch([['ask', { question: 'Which colour?', options: ['red', 'blue'] }, 'q1']]), text('noted')]), tools: [ask] });

describe('parked runs resume on their own (troupe worker on PostgreSQL)', () => {
  const freshSchema = usePostgresSchema();
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
    executions.length = 0;
  });
  beforeEach(() => {
    agents = { napper: napper(), payer: payer(), asker: asker(), refunder: refunder() };
  });
  const openStore = (schema: string) => {
    const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema });
    cleanup.push(() => store.close());
    return store;
  };
  let agents: Record<string, Agent> = {};
  const worker = (schema: string, owner: string, approvalTimeoutMs?: number): Worker => {
    const w = startWorker({ store: openStore(schema), agents, pollMs: 10, owner, suspendOnWait: true, ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}) });
    cleanup.push(() => w.stop());
    return w;
  };
  const statusOf = (store: PostgresCheckpointStore, runId: string, status: string) => async () => {
    const runs = await store.list();
    return runs.find((r) => r.runId === runId && r.head.status === status);
  };

  it('a timer: the run parks with its due time stored; after its worker stopped, another worker resumes it when the time comes', async () => {
    const schema = await freshSchema();
    const store = openStore(schema);
    napUntil = Date.now() + 2_000;
    await enqueueRun(store, { runId: 't1', agent: 'napper', input: 'rest a while' });
    const first = worker(schema, 'first');
    await until(statusOf(store, 't1', 'suspended'));
    await first.stop();
    const request = (await store.load('t1'))!.entries.find((e) => e.kind === 'wait_request')!;
    expect(request).toMatchObject({ kind: 'wait_request', waitKind: 'timer', callId: 'n1', detail: { until: napUntil }, deadline: napUntil });
    expect(await adminQuery(`SELECT run_id, wake_at FROM "${schema}".troupe_runs`)).toEqual([{ run_id: 't1', wake_at: String(napUntil) }]);
    // A new process: it knows nothing of the run but what the store says.
    const second = worker(schema, 'second');
    const done = await until(statusOf(store, 't1', 'completed'));
    await second.stop();
    expect(done.head.output).toBe('rested');
    expect([first.finished, second.finished]).toEqual([['t1'], ['t1']]);
    const run = (await store.load('t1'))!;
    expect(kinds(run.entries)).toEqual(['input', 'reply', 'wait_request', 'wait_resolution', 'result', 'turn_end', 'reply', 'turn_end']);
    expect(run.entries[4]).toMatchObject({ kind: 'result', message: { callId: 'n1', content: `Waited until ${new Date(napUntil).toISOString()}.` } });
    // The tool ran once; the resumed call opened its stored wait again.
    expect(executions).toEqual(['n1']);
    expect(await adminQuery(`SELECT wake_at FROM "${schema}".troupe_runs`)).toEqual([{ wake_at: null }]);
  });

  it('an approval with a timeout: the parked run stores its deadline as wake_at; after its worker stopped, another worker wakes it then and the approval is denied by the timeout', async () => {
    const schema = await freshSchema();
    const store = openStore(schema);
    await enqueueRun(store, { runId: 'd1', agent: 'refunder', input: 'refund order 7' });
    const first = worker(schema, 'first', 1_500);
    await until(statusOf(store, 'd1', 'suspended'));
    await first.stop();
    const request = (await store.load('d1'))!.entries.find((e) => e.kind === 'approval_request')!;
    expect(request).toMatchObject({ kind: 'approval_request', approvalId: 'd1:1.0', callId: 'r1', tool: 'refund' });
    const { requestedAt, deadline } = request as { requestedAt: number; deadline: number };
    expect(deadline).toBe(requestedAt + 1_500);
    expect(await adminQuery(`SELECT run_id, wake_at FROM "${schema}".troupe_runs`)).toEqual([{ run_id: 'd1', wake_at: String(deadline) }]);
    // A worker without an approval timeout of its own: the logged deadline wakes the run and stands.
    const second = worker(schema, 'second');
    const done = await until(statusOf(store, 'd1', 'completed'));
    await second.stop();
    expect(done.head.output).toBe('not refunded');
    const run = (await store.load('d1'))!;
    expect(kinds(run.entries)).toEqual(['input', 'reply', 'approval_request', 'approval_decision', 'result', 'turn_end', 'reply', 'turn_end']);
    expect(run.entries[3]).toMatchObject({ kind: 'approval_decision', approvalId: 'd1:1.0', callId: 'r1', approved: false, by: 'timeout' });
    expect((run.entries[3] as { decidedAt: number }).decidedAt).toBeGreaterThanOrEqual(deadline);
    expect(executions).toEqual([]);
    expect(await adminQuery(`SELECT wake_at FROM "${schema}".troupe_runs`)).toEqual([{ wake_at: null }]);
  });

  it('an event: Runner.signal from another process stores the payload and a worker resumes the parked run with it', async () => {
    const schema = await freshSchema();
    const store = openStore(schema);
    await enqueueRun(store, { runId: 's1', agent: 'payer', input: 'pay the invoice' });
    worker(schema, 'w');
    await until(statusOf(store, 's1', 'suspended'));
    expect(await adminQuery(`SELECT wake_at FROM "${schema}".troupe_runs`)).toEqual([{ wake_at: null }]);
    const signaller = openStore(schema);
    expect(await Runner.signal(signaller, 's1', 'paid', { amount: 5 })).toMatchObject([{ kind: 'wait_resolution', waitKind: 'event', callId: 'p1', ended: 'resolved', resolution: { amount: 5 } }]);
    const done = await until(statusOf(store, 's1', 'completed'));
    expect(done.head.output).toBe('paid');
    const run = (await store.load('s1'))!;
    expect(kinds(run.entries)).toEqual(['input', 'reply', 'wait_request', 'wait_resolution', 'result', 'turn_end', 'reply', 'turn_end']);
    expect(run.entries[4]).toMatchObject({ kind: 'result', message: { callId: 'p1', content: '{"amount":5}' } });
    expect(executions).toEqual(['p1']);
  });

  it('a question: Runner.answer on the parked run stores the answer and a worker resumes it', async () => {
    const schema = await freshSchema();
    const store = openStore(schema);
    await enqueueRun(store, { runId: 'a1', agent: 'asker', input: 'pick a colour' });
    worker(schema, 'w');
    await until(statusOf(store, 'a1', 'suspended'));
    const request = (await store.load('a1'))!.entries.find((e) => e.kind === 'wait_request')!;
    expect(request).toMatchObject({ waitKind: 'question', callId: 'q1', detail: { question: 'Which colour?', options: ['red', 'blue'] } });
    await Runner.answer(openStore(schema), 'a1', (request as { waitId: string }).waitId, 'blue');
    const done = await until(statusOf(store, 'a1', 'completed'));
    expect(done.head.output).toBe('noted');
    const run = (await store.load('a1'))!;
    expect(kinds(run.entries)).toEqual(['input', 'reply', 'wait_request', 'wait_resolution', 'result', 'turn_end', 'reply', 'turn_end']);
  });
});
