/**
 * Awaiting a decision sent through the bus (`--workers external`): `?wait=<seconds>` or
 * `Prefer: wait=<seconds>` on `POST /api/chat/approve`, `/api/chat/answer` and
 * `/api/runs/:id/signal` answers 200 once the run tree's log holds the decision, 409 when it
 * cannot take effect (with what stands), 202 when the wait runs out; `GET
 * /api/runs/:id/waits/:waitId` tells afterwards. Nodes and workers as in cluster-harness.ts;
 * the worker that dies before applying is a real process, SIGKILLed.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { adminQuery, POSTGRES_URL, usePostgresSchema } from '../store/harnesses.js';
import { call, eventually, openSse, type ServerAddress, type SseClient } from '../server/helpers.js';
import { useCluster } from './cluster-harness.js';
import { killAll, startServeProcess, startWorkerProcess, type ServeAddress } from './troupe-process.js';

const approvalOf = (client: SseClient): string => (client.events().find((e) => e.type === 'approval_required') as unknown as { approvalId: string }).approvalId;
const statusUrl = (runId: string, waitId: string) => `/api/runs/${runId}/waits/${encodeURIComponent(waitId)}`;

const open: SseClient[] = [];
async function sse(server: ServerAddress, method: 'GET' | 'POST', path: string, body?: object): Promise<SseClient> {
  const client = await openSse(server, method, path, body ? { body } : {});
  open.push(client);
  return client;
}
afterEach(() => {
  for (const client of open.splice(0)) client.close();
});

describe('awaited decisions through the bus', () => {
  const cluster = useCluster();

  it('a parked run: the decision awaited through node B comes back applied once a worker claims the run and records it; a second one is refused', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    await c.worker({ suspendOnWait: true, pollMs: 20 });
    const started = await sse(a, 'POST', '/api/chat', { agent: 'approver', input: 'go' });
    const runId = started.res.headers['x-run-id'] as string;
    await started.all();
    expect(started.events().at(-1)).toMatchObject({ type: 'run_suspended', runId });
    const approvalId = approvalOf(started);
    const open = await call(b, 'GET', statusUrl(runId, approvalId));
    expect([open.status, open.json]).toEqual([200, { waitId: approvalId, kind: 'approval', runId, callId: 'p1', tool: 'payout', state: 'open' }]);

    const decided = await call(b, 'POST', '/api/chat/approve?wait=30', { body: { approvalId, decision: 'deny', reason: 'not today' } });
    expect([decided.status, decided.json]).toEqual([200, { runId, approvalId, callId: 'p1', decision: 'deny', statusUrl: statusUrl(runId, approvalId), applied: true, appliedAt: expect.any(Number) }]);
    const status = await call(a, 'GET', statusUrl(runId, approvalId));
    expect([status.status, status.json]).toEqual([200, { waitId: approvalId, kind: 'approval', runId, callId: 'p1', tool: 'payout', state: 'decided', decision: { decision: 'deny', reason: 'not today', by: 'api', decidedAt: decided.json.appliedAt } }]);

    const again = await call(a, 'POST', '/api/chat/approve?wait=30', { body: { runId, callId: 'p1', decision: 'approve' } });
    expect([again.status, again.json]).toEqual([409, { error: { code: 'already_decided', message: `Approval '${approvalId}' was already decided: deny by api (not today).` } }]);
    expect((await call(a, 'GET', statusUrl(runId, `${runId}:9.9`))).json).toEqual({ error: { code: 'wait_not_found', message: `No wait '${runId}:9.9' in run '${runId}'.` } });
  });

  it('no worker to apply it: the wait runs out with 202 and the decision stays sent; the next worker applies it and the status route says so', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    const first = await c.worker({ suspendOnWait: true, pollMs: 20 });
    const started = await sse(a, 'POST', '/api/chat', { agent: 'approver', input: 'go' });
    const runId = started.res.headers['x-run-id'] as string;
    await started.all();
    await first.stop();
    const approvalId = approvalOf(started);
    // No worker runs at all now: nothing can apply it within the wait.
    const sent = await call(b, 'POST', '/api/chat/approve', { body: { approvalId, decision: 'approve' }, headers: { prefer: 'wait=1' } });
    expect([sent.status, sent.json]).toEqual([202, { runId, approvalId, callId: 'p1', decision: 'approve', statusUrl: statusUrl(runId, approvalId), applied: false, delivered: 'sent to the run’s worker' }]);
    expect((await call(b, 'GET', statusUrl(runId, approvalId))).json.state).toBe('open');
    await c.worker({ pollMs: 20 });
    const done = await eventually(() => c.store.load(runId), (run) => run?.head.status === 'completed', 15_000);
    expect(done!.head.output).toBe('done');
    expect((await call(b, 'GET', statusUrl(runId, approvalId))).json).toMatchObject({ state: 'decided', decision: { decision: 'approve', by: 'api' } });
    expect((await c.executions()).map((row) => row.call_id)).toEqual(['p1', 'w0', 'w1', 'w2', 'w3']);
  });

  it('edited args: invalid ones are refused before anything is sent; valid ones are applied on the live run and the call runs with them', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    await c.worker();
    const started = await sse(a, 'POST', '/api/chat', { agent: 'approver', input: 'go' });
    const runId = started.res.headers['x-run-id'] as string;
    await started.until((frames) => frames.some((f) => f.event === 'approval_required'));
    const approvalId = approvalOf(started);
    const invalid = await call(b, 'POST', '/api/chat/approve?wait=30', { body: { approvalId, decision: 'approve', args: { amount: 'five' } } });
    expect([invalid.status, invalid.json.error.code]).toEqual([400, 'invalid_args']);
    expect(invalid.json.error.message).toMatch(/^Invalid arguments for tool 'payout'/);
    expect(await adminQuery(`SELECT count(*)::int AS n FROM "${c.schema}".troupe_messages`)).toEqual([{ n: 0 }]);
    const edited = await call(b, 'POST', '/api/chat/approve?wait=30', { body: { approvalId, decision: 'approve', args: { amount: 3 } } });
    expect([edited.status, edited.json]).toEqual([200, { runId, approvalId, callId: 'p1', decision: 'approve', statusUrl: statusUrl(runId, approvalId), applied: true, appliedAt: expect.any(Number) }]);
    await started.all();
    expect(started.events().find((e) => e.type === 'tool_call_completed' && (e as unknown as { call: { id: string } }).call.id === 'p1')).toMatchObject({ output: 'paid 3' });
    expect((await call(b, 'GET', statusUrl(runId, approvalId))).json.decision).toEqual({ decision: 'approve', editedArguments: '{"amount":3}', by: 'consumer', decidedAt: edited.json.appliedAt });
  });

  it('an answer and a signal awaited on live runs come back applied; a second answer is refused with the one that stands', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    await c.worker();
    const asking = await sse(a, 'POST', '/api/chat', { agent: 'asker', input: 'pick' });
    const askId = asking.res.headers['x-run-id'] as string;
    await asking.until((frames) => frames.some((f) => f.event === 'human_request' || f.event === 'wait_opened'));
    const requestId = `${askId}:1.0`;
    const answered = await call(b, 'POST', '/api/chat/answer?wait=30', { body: { runId: askId, requestId, answer: 'blue' } });
    expect([answered.status, answered.json]).toEqual([200, { runId: askId, requestId, answer: 'blue', statusUrl: statusUrl(askId, requestId), applied: true, appliedAt: expect.any(Number) }]);
    await asking.all();
    expect(asking.events().at(-1)).toMatchObject({ type: 'run_completed', output: 'noted' });
    const again = await call(b, 'POST', '/api/chat/answer?wait=30', { body: { runId: askId, requestId, answer: 'red' } });
    expect([again.status, again.json]).toEqual([409, { error: { code: 'already_resolved', message: `Wait '${requestId}' was already resolved by consumer with "blue".` } }]);

    const paying = await sse(a, 'POST', '/api/chat', { agent: 'payer', input: 'pay' });
    const payId = paying.res.headers['x-run-id'] as string;
    await paying.until((frames) => frames.some((f) => f.event === 'wait_opened'));
    const signalled = await call(b, 'POST', `/api/runs/${payId}/signal?wait=30`, { body: { name: 'paid', payload: { amount: 5 } } });
    expect([signalled.status, signalled.json]).toEqual([200, { runId: payId, name: 'paid', waiting: 1, statusUrls: [statusUrl(payId, `${payId}:1.0`)], applied: true, appliedAt: expect.any(Number) }]);
    expect((await call(a, 'GET', statusUrl(payId, `${payId}:1.0`))).json).toEqual({ waitId: `${payId}:1.0`, kind: 'event', runId: payId, callId: 'e1', tool: 'pay', state: 'resolved', resolution: { amount: 5 }, by: 'signal', resolvedAt: signalled.json.appliedAt });
  });
});

describe('awaited decisions when the owning worker dies (processes)', () => {
  const freshSchema = usePostgresSchema();
  afterEach(killAll);
  afterAll(killAll);

  it('the worker holding the waiting run is SIGKILLed; the decision awaited through node B comes back applied once another worker takes the run over', async () => {
    const schema = await freshSchema();
    const [a, b] = (await Promise.all([startServeProcess(POSTGRES_URL!, schema, 'token-server-a'), startServeProcess(POSTGRES_URL!, schema, 'token-server-b')])) as [ServeAddress, ServeAddress];
    const options = { concurrency: 2, leaseTtlMs: 3_000, pollMs: 100 };
    const victim = await startWorkerProcess(POSTGRES_URL!, schema, options);
    const started = await sse(a, 'POST', '/api/chat', { agent: 'approver', input: 'go' });
    const runId = started.res.headers['x-run-id'] as string;
    await started.until((frames) => frames.some((f) => f.event === 'approval_required'), 60_000);
    const approvalId = approvalOf(started);
    await victim.process.kill();
    // The decision is sent while no process holds the run; the next worker claims it once the dead one's lease runs out.
    const decision = call(b, 'POST', '/api/chat/approve?wait=60', { body: { approvalId, decision: 'approve' } });
    await startWorkerProcess(POSTGRES_URL!, schema, options);
    const decided = await decision;
    expect([decided.status, decided.json]).toEqual([200, { runId, approvalId, callId: 'p1', decision: 'approve', statusUrl: statusUrl(runId, approvalId), applied: true, appliedAt: expect.any(Number) }]);
    const rest = await sse(b, 'GET', `/api/runs/${runId}/stream`);
    await rest.all();
    expect(rest.events().at(-1)).toMatchObject({ type: 'run_completed', output: 'done' });
  }, 120_000);
});
