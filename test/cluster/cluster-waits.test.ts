/**
 * A run's waits across a cluster (`--workers external`): any server node lists a worker's run's
 * open waits in the run detail, and delivers a signal (`POST /api/runs/:id/signal`) or an
 * answer (`POST /api/chat/answer`) to it, live on its worker or parked in the store.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, eventually, openSse, type SseClient } from '../server/helpers.js';
import type { TroupeServer } from '../../src/server/index.js';
import { useCluster } from './cluster-harness.js';

describe('waits of worker runs through any server node', () => {
  const cluster = useCluster();
  const open: SseClient[] = [];
  afterEach(() => {
    for (const client of open.splice(0)) client.close();
  });
  const sse = async (server: TroupeServer, body: object) => {
    const client = await openSse(server, 'POST', '/api/chat', { body });
    open.push(client);
    return client;
  };

  it('a live run on a worker: node B lists its event wait and signals it; the call gets the payload', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    await c.worker();
    const started = await sse(a, { agent: 'payer', input: 'pay' });
    const runId = started.res.headers['x-run-id'] as string;
    await started.until((frames) => frames.some((f) => f.event === 'wait_opened'));
    const detail = await eventually(() => call(b, 'GET', `/api/runs/${runId}`), (r) => r.json.waits?.length === 1);
    expect(detail.json).toMatchObject({ runId, source: 'stored', status: 'running', pendingApprovals: [], waits: [{ waitId: `${runId}:1.0`, kind: 'event', runId, callId: 'e1', tool: 'pay', detail: { name: 'paid' } }] });
    // Bad requests are typed errors; nothing is sent.
    expect(await call(b, 'POST', `/api/runs/${runId}/signal`, { body: { name: 'refunded' } })).toMatchObject({ status: 404, json: { error: { code: 'wait_not_found', message: `No call of run '${runId}' waits for event 'refunded' (signals are not kept for later).` } } });
    expect(await call(b, 'POST', `/api/runs/${runId}/signal`, { body: {} })).toMatchObject({ status: 400, json: { error: { code: 'missing_field' } } });
    expect(await call(b, 'POST', `/api/runs/${runId}/signal`, { body: { name: 'paid', amount: 5 } })).toMatchObject({ status: 400, json: { error: { code: 'unknown_field' } } });
    expect(await call(b, 'POST', '/api/runs/run_nope/signal', { body: { name: 'paid' } })).toMatchObject({ status: 404, json: { error: { code: 'run_not_found', message: "No run 'run_nope'." } } });
    expect(await call(b, 'GET', `/api/runs/${runId}/signal`)).toMatchObject({ status: 405 });
    const signalled = await call(b, 'POST', `/api/runs/${runId}/signal`, { body: { name: 'paid', payload: { amount: 5 } } });
    expect([signalled.status, signalled.json]).toEqual([202, { runId, name: 'paid', waiting: 1, statusUrls: [`/api/runs/${runId}/waits/${encodeURIComponent(`${runId}:1.0`)}`], delivered: 'sent to the run’s worker' }]);
    await started.all();
    expect(started.events().at(-1)).toMatchObject({ type: 'run_completed', output: 'paid' });
    const saved = (await c.store.load(runId))!;
    expect(saved.entries.find((e) => e.kind === 'result')).toMatchObject({ message: { callId: 'e1', content: '{"amount":5}' } });
    expect((await call(b, 'POST', `/api/runs/${runId}/signal`, { body: { name: 'paid' } })).json.error.code).toBe('run_finished');
  });

  it('a parked run (--suspend-approvals): node B answers its question; a worker records the answer and resumes it', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    await c.worker({ suspendOnWait: true, pollMs: 20 });
    const started = await sse(a, { agent: 'asker', input: 'pick' });
    const runId = started.res.headers['x-run-id'] as string;
    await started.all();
    expect(started.events().at(-1)).toMatchObject({ type: 'run_suspended', runId });
    const detail = await call(b, 'GET', `/api/runs/${runId}`);
    expect(detail.json).toMatchObject({ status: 'suspended', waits: [{ waitId: `${runId}:1.0`, kind: 'question', callId: 'q1', detail: { question: 'Which colour?', options: ['red', 'blue'], multiSelect: false } }] });
    const requestId = detail.json.waits[0].waitId as string;
    expect(await call(b, 'POST', '/api/chat/answer', { body: { runId, requestId, answer: 'green' } })).toMatchObject({ status: 400, json: { error: { code: 'invalid_answer', message: "'green' is not an option of 'Which colour?'; options: red, blue." } } });
    expect(await call(b, 'POST', '/api/chat/answer', { body: { runId, requestId: 'nope', answer: 'red' } })).toMatchObject({ status: 404, json: { error: { code: 'question_not_found', message: `No question 'nope' is waiting in run '${runId}'.` } } });
    const answered = await call(b, 'POST', '/api/chat/answer', { body: { runId, requestId, answer: 'blue' } });
    expect([answered.status, answered.json]).toEqual([202, { runId, requestId, answer: 'blue', statusUrl: `/api/runs/${runId}/waits/${encodeURIComponent(requestId)}`, delivered: 'sent to the run’s worker' }]);
    const done = await eventually(() => c.store.load(runId), (run) => run?.head.status === 'completed', 15_000);
    expect(done!.head.output).toBe('noted');
    expect(done!.entries.filter((e) => e.kind === 'wait_resolution')).toMatchObject([{ waitId: requestId, waitKind: 'question', ended: 'resolved', resolution: 'blue', by: 'api' }]);
    expect(done!.entries.find((e) => e.kind === 'result')).toMatchObject({ message: { callId: 'q1', content: 'blue' } });
  });

  it('a parked run: a signal through node B makes a worker resume it with the payload', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    await c.worker({ suspendOnWait: true, pollMs: 20 });
    const started = await sse(a, { agent: 'payer', input: 'pay' });
    const runId = started.res.headers['x-run-id'] as string;
    await started.all();
    expect(started.events().at(-1)).toMatchObject({ type: 'run_suspended', runId });
    const signalled = await call(b, 'POST', `/api/runs/${runId}/signal`, { body: { name: 'paid', payload: 7 } });
    expect([signalled.status, signalled.json]).toEqual([202, { runId, name: 'paid', waiting: 1, statusUrls: [`/api/runs/${runId}/waits/${encodeURIComponent(`${runId}:1.0`)}`], delivered: 'sent to the run’s worker' }]);
    const done = await eventually(() => c.store.load(runId), (run) => run?.head.status === 'completed', 15_000);
    expect(done!.head.output).toBe('paid');
    expect(done!.entries.find((e) => e.kind === 'result')).toMatchObject({ message: { callId: 'e1', content: '7' } });
    expect((await c.executions()).map((row) => row.call_id)).toEqual(['e1']);
  });
});
