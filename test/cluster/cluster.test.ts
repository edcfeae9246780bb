import { afterEach, describe, expect, it } from 'vitest';
import { call, openSse, trace, type SseClient } from '../server/helpers.js';
import { useCluster } from './cluster-harness.js';

describe(`servers and workers on one PostgreSQL`, () => {
  const cluster = useCluster();
  const open: SseClient[] = [];
  afterEach(() => {
    for (const client of open.splice(0)) client.close();
  });
  const chat = async (server: Parameters<typeof openSse>[0], agent: string, input = 'go') => {
    const client = await openSse(server, 'POST', '/api/chat', { body: { agent, input } });
    open.push(client);
    return client;
  };

  it('a run started on server A runs on a worker; server B streams it from the start and cancels it; both streams end with the cancel', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    await c.worker();
    const started = await chat(a, 'hanger');
    expect(started.status).toBe(200);
    const runId = started.res.headers['x-run-id'] as string;
    await started.until((frames) => frames.some((f) => f.event === 'tool_call_started'));
    const watched = await openSse(b, 'GET', `/api/runs/${runId}/stream`);
    open.push(watched);
    await watched.until((frames) => frames.some((f) => f.event === 'tool_call_started'));
    const cancel = await call(b, 'POST', '/api/chat/cancel', { body: { runId } });
    expect([cancel.status, cancel.json]).toEqual([202, { runId, status: 'cancelling' }]);
    const expected = ['run_started', 'turn_started', 'checkpoint_saved', 'message_completed', 'tool_call_started:h1', 'checkpoint_saved', 'tool_call_completed:h1', 'run_failed'];
    expect(trace((await started.all(), started.events()))).toEqual(expected);
    expect(trace((await watched.all(), watched.events()))).toEqual(expected);
    // The same stored events, with the same ids, on both nodes.
    expect(watched.frames.map((f) => f.id)).toEqual(started.frames.map((f) => f.id));
    const failed = started.events().at(-1) as unknown as { error: { code: string } };
    expect(failed.error.code).toBe('RUN_CANCELLED');
    expect((await c.store.load(runId))!.head.status).toBe('cancelled');
    const again = await call(b, 'POST', '/api/chat/cancel', { body: { runId } });
    expect([again.status, again.json.error.code]).toEqual([409, 'run_finished']);
  });

  it('an approval asked on the stream of server A is decided through server B; only that call runs, once', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    await c.worker();
    const started = await chat(a, 'approver');
    const runId = started.res.headers['x-run-id'] as string;
    await started.until((frames) => frames.some((f) => f.event === 'approval_required'));
    const asked = started.events().find((e) => e.type === 'approval_required') as unknown as { approvalId: string };
    expect(asked.approvalId.startsWith(`${runId}:`)).toBe(true);
    // Server B lists the run (it runs on the worker) with the call that waits.
    const listed = (await call(b, 'GET', '/api/runs')).json.runs;
    expect(listed).toEqual([expect.objectContaining({ runId, status: 'running', pendingApprovals: [expect.objectContaining({ approvalId: asked.approvalId, runId, callId: 'p1', tool: 'payout' })] })]);
    const decided = await call(b, 'POST', '/api/chat/approve', { body: { approvalId: asked.approvalId, decision: 'approve' } });
    expect([decided.status, decided.json]).toEqual([202, { runId, approvalId: asked.approvalId, callId: 'p1', decision: 'approve', statusUrl: `/api/runs/${runId}/waits/${encodeURIComponent(asked.approvalId)}`, delivered: 'sent to the run’s worker' }]);
    await started.all();
    const events = started.events();
    expect(events.at(-1)).toMatchObject({ type: 'run_completed', output: 'done' });
    expect(events.filter((e) => e.type === 'tool_call_completed').map((e) => (e.call as { id: string }).id).sort()).toEqual(['p1', 'w0', 'w1', 'w2', 'w3']);
    expect((await c.executions()).map((row) => row.call_id)).toEqual(['p1', 'w0', 'w1', 'w2', 'w3']);
    // Deciding it again: refused with the decision that stands (the live run logged it as its consumer's).
    const again = await call(b, 'POST', '/api/chat/approve', { body: { approvalId: asked.approvalId, decision: 'approve' } });
    expect([again.status, again.json.error]).toEqual([409, { code: 'already_decided', message: `Approval '${asked.approvalId}' was already decided: approve by consumer.` }]);
  });
});
