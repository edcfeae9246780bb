import { afterEach, describe, expect, it } from 'vitest';
import { adminQuery } from '../store/harnesses.js';
import { call, eventually, openSse, trace, type SseClient } from '../server/helpers.js';
import type { TroupeServer } from '../../src/server/index.js';
import { useCluster } from './cluster-harness.js';

const approvalOf = (client: SseClient): string => (client.events().find((e) => e.type === 'approval_required') as unknown as { approvalId: string }).approvalId;

describe(`messages between cluster nodes`, () => {
  const cluster = useCluster();
  const open: SseClient[] = [];
  afterEach(() => {
    for (const client of open.splice(0)) client.close();
  });
  const sse = async (server: TroupeServer, method: 'GET' | 'POST', path: string, body?: object, headers?: Record<string, string>) => {
    const client = await openSse(server, method, path, { ...(body ? { body } : {}), ...(headers ? { headers } : {}) });
    open.push(client);
    return client;
  };

  it('a cancel sent to a run no worker has started stops it before its first model request', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    const started = await sse(a, 'POST', '/api/chat', { agent: 'fiver', input: 'go' });
    const runId = started.res.headers['x-run-id'] as string;
    expect(await c.store.runState(runId)).toBe('queued');
    const listed = (await call(b, 'GET', '/api/runs')).json.runs;
    expect(listed).toEqual([expect.objectContaining({ runId, source: 'stored', agent: 'fiver', input: 'go', status: 'queued', pendingApprovals: [] })]);
    expect((await call(b, 'GET', '/api/runs?status=queued')).json.runs.map((r: { runId: string }) => r.runId)).toEqual([runId]);
    const cancel = await call(b, 'POST', '/api/chat/cancel', { body: { runId } });
    expect([cancel.status, cancel.json]).toEqual([202, { runId, status: 'cancelling' }]);
    await c.worker();
    await started.all();
    expect(trace(started.events())).toEqual(['run_started', 'run_failed']);
    expect((started.events()[1] as unknown as { error: { code: string } }).error.code).toBe('RUN_CANCELLED');
    expect(await c.executions()).toEqual([]);
    const saved = (await c.store.load(runId))!;
    expect([saved.head.status, saved.entries.map((e) => e.kind)]).toEqual(['cancelled', ['input']]);
    // Its messages go with the run's end (the worker clears them once the last event is out).
    const left = () => adminQuery<{ n: number }>(`SELECT count(*)::int AS n FROM "${c.schema}".troupe_messages`);
    expect(await eventually(left, (rows) => rows[0]!.n === 0)).toEqual([{ n: 0 }]);
  });

  it('a steer sent through server B reaches the run on its worker, is logged under the message id, and shows on A’s stream', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    await c.worker();
    const started = await sse(a, 'POST', '/api/chat', { agent: 'approver', input: 'go' });
    const runId = started.res.headers['x-run-id'] as string;
    await started.until((frames) => frames.some((f) => f.event === 'approval_required'));
    const steer = await call(b, 'POST', '/api/chat/steer', { body: { runId, text: 'also: be brief' } });
    expect(steer.status).toBe(202);
    expect(steer.json).toEqual({ runId, id: expect.stringMatching(/^msg_\d+$/), queue: 'steer' });
    expect((await call(b, 'POST', '/api/chat/approve', { body: { approvalId: approvalOf(started), decision: 'deny', reason: 'not today' } })).status).toBe(202);
    await started.all();
    const injected = started.events().filter((e) => e.type === 'user_message_injected');
    expect(injected).toEqual([expect.objectContaining({ type: 'user_message_injected', source: 'steer', id: steer.json.id, message: { role: 'user', content: 'also: be brief' } })]);
    expect(started.events().at(-1)).toMatchObject({ type: 'run_completed', output: 'done' });
    const saved = (await c.store.load(runId))!;
    expect(saved.entries.filter((e) => e.kind === 'input')).toEqual([
      { kind: 'input', message: { role: 'user', content: 'go' } },
      { kind: 'input', message: { role: 'user', content: 'also: be brief' }, source: 'steer', id: steer.json.id },
    ]);
    const denied = saved.entries.find((e) => e.kind === 'result' && e.message.role === 'tool' && e.message.callId === 'p1');
    expect(denied).toMatchObject({ message: { content: expect.stringContaining('not today') } });
    expect((await c.executions()).map((row) => row.call_id)).toEqual(['w0', 'w1', 'w2', 'w3']);
  });

  it('with --suspend-approvals a waiting run parks and frees its worker; the decision sent later makes a worker resume it; a reattached stream replays after its Last-Event-ID', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    await c.worker({ suspendOnWait: true });
    const started = await sse(a, 'POST', '/api/chat', { agent: 'approver', input: 'go' });
    const runId = started.res.headers['x-run-id'] as string;
    await started.all();
    expect(started.events().at(-1)).toMatchObject({ type: 'run_suspended', runId });
    const saved = (await c.store.load(runId))!;
    expect([saved.head.status, saved.lease]).toEqual(['suspended', undefined]);
    const lastSeen = started.frames.at(-1)!.id!;
    const decided = await call(b, 'POST', '/api/chat/approve', { body: { runId, callId: 'p1', decision: 'approve' } });
    expect([decided.status, decided.json.approvalId]).toEqual([202, approvalOf(started)]);
    const reattached = await sse(b, 'GET', `/api/runs/${runId}/stream`, undefined, { 'last-event-id': lastSeen });
    await reattached.all();
    const events = reattached.events();
    expect(Number(reattached.frames[0]!.id)).toBeGreaterThan(Number(lastSeen));
    expect(events[0]).toMatchObject({ type: 'run_started', runId });
    expect(events.at(-1)).toMatchObject({ type: 'run_completed', output: 'done' });
    expect((await c.store.load(runId))!.head.status).toBe('completed');
    expect((await c.executions()).map((row) => row.call_id)).toEqual(['p1', 'w0', 'w1', 'w2', 'w3']);
    // A stream from the start replays through the park to the end.
    const whole = await sse(a, 'GET', `/api/runs/${runId}/stream`);
    await whole.all();
    expect(whole.events().filter((e) => e.runId === runId && e.type.startsWith('run_')).map((e) => e.type)).toEqual(['run_started', 'run_suspended', 'run_started', 'run_completed']);
  });

  it('a stopping worker parks its runs that wait for a decision instead of waiting for a human; another worker resumes them once decided', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    const first = await c.worker({ owner: 'first' });
    const started = await sse(a, 'POST', '/api/chat', { agent: 'approver', input: 'go' });
    const runId = started.res.headers['x-run-id'] as string;
    await started.until((frames) => frames.some((f) => f.event === 'approval_required'));
    await first.stop();
    await started.all();
    expect(started.events().at(-1)).toMatchObject({ type: 'run_suspended', runId });
    expect((await c.store.load(runId))!.head.status).toBe('suspended');
    await c.worker({ owner: 'second' });
    expect((await call(b, 'POST', '/api/chat/approve', { body: { approvalId: approvalOf(started), decision: 'approve' } })).status).toBe(202);
    const rest = await sse(b, 'GET', `/api/runs/${runId}/stream`, undefined, { 'last-event-id': started.frames.at(-1)!.id! });
    await rest.all();
    expect(rest.events().at(-1)).toMatchObject({ type: 'run_completed', output: 'done' });
    expect((await c.executions()).map((row) => row.call_id)).toEqual(['p1', 'w0', 'w1', 'w2', 'w3']);
  });

  it('answers bad requests with typed errors and sends nothing', async () => {
    const c = await cluster();
    const a = await c.server();
    const cases = [
      [await call(a, 'POST', '/api/chat/cancel', { body: { runId: 'nope' } }), 404, 'run_not_found', "No run 'nope'."],
      [await call(a, 'POST', '/api/chat/steer', { body: { runId: 'nope', text: 'x' } }), 404, 'run_not_found', "No run 'nope'."],
      [await call(a, 'POST', '/api/chat/approve', { body: { approvalId: 'nope:1', decision: 'approve' } }), 404, 'approval_not_found', "No approval 'nope:1' is waiting."],
      [await call(a, 'POST', '/api/chat', { body: { agent: 'ghost', input: 'x' } }), 404, 'unknown_agent', "Unknown agent 'ghost'. Registered agents: fiver, approver, hanger, echo, payer, asker."],
      [await call(a, 'POST', '/api/chat?protocol=v2', { body: { agent: 'fiver', input: 'x' } }), 400, 'invalid_protocol', "Unknown protocol 'v2'. Supported: ui (AI SDK UI message stream)."],
      [await call(a, 'POST', '/api/chat?protocol=ui', { body: { agent: 'ghost', input: 'x' } }), 404, 'unknown_agent', "Unknown agent 'ghost'. Registered agents: fiver, approver, hanger, echo, payer, asker."],
      [await call(a, 'POST', '/api/chat?protocol=ui', { body: { agent: 'fiver' } }), 400, 'missing_field', "Missing field 'input' (text) or 'messages' (AI SDK UIMessage[])."],
      [await call(a, 'GET', '/api/runs/nope/stream?protocol=ui'), 404, 'run_not_found', "No run 'nope'."],
      [await call(a, 'POST', '/api/chat/approve?wait=0', { body: { approvalId: 'nope:1', decision: 'approve' } }), 400, 'invalid_wait', "Query parameter 'wait' must be a whole number of seconds from 1 to 60, got '0'."],
      [await call(a, 'POST', '/api/chat/answer?wait=61', { body: { runId: 'nope', requestId: 'nope:1.0', answer: 'x' } }), 400, 'invalid_wait', "Query parameter 'wait' must be a whole number of seconds from 1 to 60, got '61'."],
      [await call(a, 'GET', '/api/runs/nope/waits/nope%3A1.0'), 404, 'run_not_found', "No run 'nope'."],
      [await call(a, 'GET', '/api/runs/nope/stream'), 404, 'run_not_found', "No run 'nope'."],
      [await call(a, 'POST', '/api/chat/answer', { body: { runId: 'nope', requestId: 'nope:1.0', answer: 'x' } }), 404, 'run_not_found', "No run 'nope'."],
      [await call(a, 'POST', '/api/runs/nope/signal', { body: { name: 'paid' } }), 404, 'run_not_found', "No run 'nope'."],
      [await call(a, 'POST', '/api/runs/nope%2F1.0/signal', { body: { name: 'paid' } }), 400, 'invalid_run_id', "'nope/1.0' is a sub-run; address its root run 'nope'."],
      [await call(a, 'POST', '/api/runs/nope/resume'), 409, 'resumed_by_workers', "Run 'nope' is resumed by the workers on their own (a stored running or decided run is taken by the next free worker)."],
    ] as const;
    for (const [response, status, code, message] of cases) expect([response.status, response.json.error]).toEqual([status, { code, message }]);
    expect(await adminQuery(`SELECT (SELECT count(*)::int FROM "${c.schema}".troupe_messages) AS messages, (SELECT count(*)::int FROM "${c.schema}".troupe_jobs) AS jobs`)).toEqual([{ messages: 0, jobs: 0 }]);
  });
});
