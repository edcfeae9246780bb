/**
 * The waits of a run through the API of a server that runs its runs itself: the run detail
 * lists them; POST /api/runs/:id/signal and POST /api/chat/answer reach a live run at once,
 * and a run parked in the checkpoint store by another process gets them recorded in its log
 * and resumed here.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, askHuman, tool, waitForEvent } from '../../src/index.js';
import { ScriptedModel, batch, text } from '../../src/entry/testing.js';
import { createServer, type TroupeServer } from '../../src/entry/server.js';
import { call, eventually, openSse } from './helpers.js';

let server: TroupeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const pay = tool({ name: 'pay', description: 'd', parameters: z.object({}), execute: () => waitForEvent('paid') });
const payer = (model: ScriptedModel) => new Agent({ name: 'payer', model, tools: [pay] });
const asker = (model: ScriptedModel) => new Agent({ name: 'asker', model, tools: [askHuman({ name: 'ask' })] });
const paying = () => new ScriptedModel([batch([['pay', {}, 'e1']]), text('paid')]);
const asking = () => new ScriptedModel([batch([['ask', { question: 'Which colour?', options: ['red', 'blue'] }, 'q1']]), text('noted')]);

describe('waits through the API (the server runs the runs)', () => {
  it('a live run: the detail lists its event wait; a signal for another event is 404, for its event 200 with the count; the call gets the payload', async () => {
    server = await createServer({ agents: { payer: () => payer(paying()) } });
    const chat = await openSse(server, 'POST', '/api/chat', { body: { agent: 'payer', input: 'go' } });
    const runId = chat.res.headers['x-run-id'] as string;
    const waiting = await eventually(() => call(server!, 'GET', `/api/runs/${runId}`), (r) => r.json.waits?.length === 1);
    expect(waiting.json.waits).toEqual([{ waitId: `${runId}:1.0`, kind: 'event', runId, callId: 'e1', tool: 'pay', detail: { name: 'paid' }, since: expect.any(Number) }]);
    expect(await call(server, 'POST', `/api/runs/${runId}/signal`, { body: { name: 'refunded' } })).toMatchObject({ status: 404, json: { error: { code: 'wait_not_found', message: `No call of run '${runId}' waits for event 'refunded' (signals are not kept for later).` } } });
    expect(await call(server, 'POST', `/api/runs/${runId}/signal`, { body: { name: 'paid', payload: { cents: 5 } } })).toMatchObject({ status: 200, json: { runId, name: 'paid', delivered: 1 } });
    await chat.all();
    expect(chat.events().at(-1)).toMatchObject({ type: 'run_completed', output: 'paid' });
    expect((await call(server, 'GET', `/api/runs/${runId}`)).json.waits).toEqual([]);
    expect(await call(server, 'POST', '/api/runs/nope/signal', { body: { name: 'paid' } })).toMatchObject({ status: 404, json: { error: { code: 'run_not_found', message: "No run 'nope'." } } });
  });

  it('a run parked in the store by another process: the signal is recorded in its log and the run resumes here', async () => {
    const store = new MemoryCheckpointStore();
    server = await createServer({ agents: { payer: () => payer(new ScriptedModel([text('paid')])) }, checkpointStore: store });
    await Runner.stream(payer(paying()), 'go', { checkpoint: { store, runId: 'job-1', suspendOnWait: true } }).result().catch(() => undefined);
    expect(store.load('job-1')!.head.status).toBe('suspended');
    const detail = await call(server, 'GET', '/api/runs/job-1');
    expect(detail.json).toMatchObject({ source: 'stored', status: 'suspended', pendingApprovals: [], waits: [{ waitId: 'job-1:1.0', kind: 'event', detail: { name: 'paid' } }] });
    const signalled = await call(server, 'POST', '/api/runs/job-1/signal', { body: { name: 'paid', payload: 'ok' } });
    expect([signalled.status, signalled.json]).toEqual([200, { runId: 'job-1', name: 'paid', delivered: 1, resumed: true }]);
    const done = await eventually(() => call(server!, 'GET', '/api/runs/job-1'), (r) => r.json.status === 'completed');
    expect(done.json.output).toBe('paid');
    expect(store.load('job-1')!.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'wait_request', 'wait_resolution', 'result', 'turn_end', 'reply', 'turn_end']);
  });

  it('a run parked in the store: POST /api/chat/answer checks the answer against the question, records it and resumes the run here', async () => {
    const store = new MemoryCheckpointStore();
    server = await createServer({ agents: { asker: () => asker(new ScriptedModel([text('noted')])) }, checkpointStore: store });
    await Runner.stream(asker(asking()), 'go', { checkpoint: { store, runId: 'job-2', suspendOnWait: true } }).result().catch(() => undefined);
    const before = store.load('job-2')!.entries.length;
    expect(await call(server, 'POST', '/api/chat/answer', { body: { runId: 'job-2', requestId: 'job-2:1.0', answer: 'green' } })).toMatchObject({ status: 400, json: { error: { code: 'invalid_answer', message: "'green' is not an option of 'Which colour?'; options: red, blue." } } });
    expect(await call(server, 'POST', '/api/chat/answer', { body: { runId: 'job-2', requestId: 'job-2:9.9', answer: 'red' } })).toMatchObject({ status: 404, json: { error: { code: 'question_not_found', message: "No question 'job-2:9.9' is waiting in run 'job-2'." } } });
    expect(await call(server, 'POST', '/api/chat/answer', { body: { runId: 'job-2', requestId: 'job-2:1.0' } })).toMatchObject({ status: 400, json: { error: { code: 'missing_field', message: "Missing field 'answer'." } } });
    expect(store.load('job-2')!.entries).toHaveLength(before);
    const answered = await call(server, 'POST', '/api/chat/answer', { body: { runId: 'job-2', requestId: 'job-2:1.0', answer: 'blue' } });
    expect([answered.status, answered.json]).toEqual([200, { runId: 'job-2', requestId: 'job-2:1.0', answer: 'blue', resumed: true }]);
    const done = await eventually(() => call(server!, 'GET', '/api/runs/job-2'), (r) => r.json.status === 'completed');
    expect(done.json.output).toBe('noted');
    expect(store.load('job-2')!.entries.find((e) => e.kind === 'result')).toMatchObject({ message: { callId: 'q1', content: 'blue' } });
  });
});
