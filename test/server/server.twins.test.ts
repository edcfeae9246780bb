import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type TroupeServer } from '../../src/server/index.js';
import type { PendingApprovalView } from '../../src/server/index.js';
import type { ApprovalRecord, WireRecord, WireRunEvent } from '../../src/inspect/wire.js';
import { twinRefundsFactory } from './agents.js';
import { call, eventually, openChat, openSse, type SseClient } from './helpers.js';

// Split from server.test.ts: the regression suite of approvals keyed by call id across a run tree.
const refunded: number[] = [];
const agents = { twins: twinRefundsFactory(refunded) };
const open: SseClient[] = [];
let server: TroupeServer;

beforeAll(async () => {
  server = await createServer({ agents });
});

afterEach(() => {
  for (const client of open.splice(0)) client.close();
  refunded.length = 0;
});

afterAll(async () => {
  await server.close();
});

const chat = (target: TroupeServer, agent: string, input = 'go'): Promise<SseClient> => openChat(target, open, agent, input);

describe('server: approvals of parallel sub-runs with the same call id', () => {
  /** Starts the `twins` run and waits until both sub-runs' `k1` calls wait. */
  async function twins(): Promise<{ client: SseClient; runId: string; small: PendingApprovalView; large: PendingApprovalView }> {
    const client = await chat(server, 'twins');
    const runId = client.res.headers['x-run-id'] as string;
    const res = await eventually(() => call(server, 'GET', `/api/runs/${runId}`), (r) => r.json.pendingApprovals.length === 2);
    const pending = res.json.pendingApprovals as PendingApprovalView[];
    const small = pending.find((p) => (p.args as { cents: number }).cents === 100)!;
    const large = pending.find((p) => (p.args as { cents: number }).cents === 999_999)!;
    expect(small).toEqual({ approvalId: small.approvalId, runId: small.runId, callId: 'k1', tool: 'refund', args: { orderId: 'A1', cents: 100 }, path: ['desk', 'small'], agent: 'small', since: small.since, deadline: small.since + 300_000 });
    expect(large).toEqual({ approvalId: large.approvalId, runId: large.runId, callId: 'k1', tool: 'refund', args: { orderId: 'B2', cents: 999_999 }, path: ['desk', 'large'], agent: 'large', since: large.since, deadline: large.since + 300_000 });
    expect(small.approvalId).not.toBe(large.approvalId);
    expect(small.runId).not.toBe(large.runId);
    expect(small.runId.startsWith(`${runId}/`)).toBe(true);
    expect(large.runId.startsWith(`${runId}/`)).toBe(true);
    return { client, runId, small, large };
  }

  /** The sub-run's result for its `k1` call. */
  function k1Result(client: SseClient, subRunId: string): WireRunEvent | undefined {
    return client.events().find((e) => e.type === 'tool_call_completed' && e.runId === subRunId && (e.call as { id: string }).id === 'k1');
  }

  it('approving one by approvalId runs only that one; the other waits until denied by its own approvalId', async () => {
    const { client, runId, small, large } = await twins();

    // By call id alone, the root run cannot tell them apart.
    const ambiguous = await call(server, 'POST', '/api/chat/approve', { body: { runId, callId: 'k1', decision: 'approve' } });
    expect(ambiguous.status).toBe(409);
    // Listed in the order the runtime opened them.
    const listed = server.run(runId)!.pendingApprovals().map((p) => `${p.approvalId} (run ${p.runId})`);
    expect(listed.sort()).toEqual([`${small.approvalId} (run ${small.runId})`, `${large.approvalId} (run ${large.runId})`].sort());
    expect(ambiguous.json).toEqual({
      error: { code: 'approval_ambiguous', message: `Call 'k1' is waiting in more than one run under '${runId}': ${server.run(runId)!.pendingApprovals().map((p) => `${p.approvalId} (run ${p.runId})`).join(', ')}. Decide by 'approvalId'.` },
    });
    expect(refunded).toEqual([]);
    expect(server.run(runId)!.pendingApprovals()).toHaveLength(2);

    const approved = await call(server, 'POST', '/api/chat/approve', { body: { approvalId: small.approvalId, decision: 'approve' } });
    expect(approved.status).toBe(200);
    expect(approved.json).toEqual({ runId: small.runId, approvalId: small.approvalId, callId: 'k1', decision: 'approve' });
    await eventually(() => refunded.length, (n) => n === 1);
    expect(refunded).toEqual([100]);
    // The other one still waits, untouched.
    await new Promise((r) => setTimeout(r, 100));
    expect(server.run(runId)!.pendingApprovals()).toEqual([large]);
    expect(server.run(runId)!.status).toBe('running');

    const denied = await call(server, 'POST', '/api/chat/approve', { body: { approvalId: large.approvalId, decision: 'deny', reason: 'too large' } });
    expect(denied.status).toBe(200);
    expect(denied.json).toEqual({ runId: large.runId, approvalId: large.approvalId, callId: 'k1', decision: 'deny' });
    await client.all();
    expect(refunded).toEqual([100]);
    expect(k1Result(client, small.runId)).toMatchObject({ isError: false, output: 'refunded 100 cents on A1' });
    expect(k1Result(client, large.runId)).toMatchObject({ isError: true, output: "Tool error: approval denied for tool 'refund': too large" });
    expect(client.events().at(-1)).toMatchObject({ type: 'run_completed', runId, output: 'both handled' });

    // The feed told the two approvals apart.
    const records = server.feed.historyOf(runId).filter((r): r is ApprovalRecord => r.kind === 'approval');
    const states = (id: string): string[] => records.filter((r) => r.approvalId === id).map((r) => `${r.runId}:${r.callId}:${r.state}`);
    expect(states(small.approvalId)).toEqual([`${small.runId}:k1:pending`, `${small.runId}:k1:approved`]);
    expect(states(large.approvalId)).toEqual([`${large.runId}:k1:pending`, `${large.runId}:k1:denied`]);
    expect(records).toHaveLength(4);
  });

  it('runId of the waiting sub-run + callId decides that one; runId of the root works once only one k1 waits', async () => {
    const { client, runId, small, large } = await twins();

    const approved = await call(server, 'POST', '/api/chat/approve', { body: { runId: large.runId, callId: 'k1', decision: 'approve' } });
    expect(approved.status).toBe(200);
    expect(approved.json).toEqual({ runId: large.runId, approvalId: large.approvalId, callId: 'k1', decision: 'approve' });
    await eventually(() => refunded.length, (n) => n === 1);
    expect(refunded).toEqual([999_999]);
    expect(server.run(runId)!.pendingApprovals()).toEqual([small]);

    // The sub-run that was decided has nothing waiting any more.
    const again = await call(server, 'POST', '/api/chat/approve', { body: { runId: large.runId, callId: 'k1', decision: 'approve' } });
    expect(again.status).toBe(404);
    expect(again.json).toEqual({ error: { code: 'approval_not_found', message: `No approval is waiting for call 'k1' in run '${large.runId}'.` } });

    // Only one k1 left in the tree: the root run id finds it.
    const denied = await call(server, 'POST', '/api/chat/approve', { body: { runId, callId: 'k1', decision: 'deny' } });
    expect(denied.status).toBe(200);
    expect(denied.json).toEqual({ runId: small.runId, approvalId: small.approvalId, callId: 'k1', decision: 'deny' });
    await client.all();
    expect(refunded).toEqual([999_999]);
    expect(k1Result(client, small.runId)).toMatchObject({ isError: true, output: "Tool error: approval denied for tool 'refund'." });
    expect(k1Result(client, large.runId)).toMatchObject({ isError: false, output: 'refunded 999999 cents on B2' });
  });

  it('cancel releases both holds as cancelled, also the one whose event the server had not reached', async () => {
    const { client, runId, small, large } = await twins();
    expect((await call(server, 'POST', '/api/chat/cancel', { body: { runId } })).status).toBe(202);
    await client.all();
    expect(refunded).toEqual([]);
    expect(client.events().at(-1)).toMatchObject({ type: 'run_failed', runId, error: { code: 'RUN_CANCELLED' } });
    const records = server.feed.historyOf(runId).filter((r): r is ApprovalRecord => r.kind === 'approval');
    const states = (id: string): string[] => records.filter((r) => r.approvalId === id).map((r) => r.state);
    expect(states(small.approvalId)).toEqual(['pending', 'cancelled']);
    expect(states(large.approvalId)).toEqual(['pending', 'cancelled']);
    expect(server.run(runId)!.pendingApprovals()).toEqual([]);
  });

  it('approvalTimeoutMs denies both, each under its own approvalId', async () => {
    const quick = await createServer({ agents, approvalTimeoutMs: 150, inspect: 'off' });
    try {
      const records: WireRecord[] = [];
      const unsubscribe = quick.feed.subscribe((r) => records.push(r));
      const client = await chat(quick, 'twins');
      const runId = client.res.headers['x-run-id'] as string;
      await client.all();
      unsubscribe();
      expect(refunded).toEqual([]);
      const approvals = records.filter((r): r is ApprovalRecord => r.kind === 'approval');
      const byId = new Map<string, string[]>();
      for (const a of approvals) byId.set(a.approvalId, [...(byId.get(a.approvalId) ?? []), a.state]);
      expect([...byId.values()]).toEqual([
        ['pending', 'timed_out'],
        ['pending', 'timed_out'],
      ]);
      expect(new Set(approvals.map((a) => a.runId)).size).toBe(2);
      for (const a of approvals) expect(a.runId.startsWith(`${runId}/`)).toBe(true);
      const results = client.events().filter((e) => e.type === 'tool_call_completed' && (e.call as { id: string }).id === 'k1');
      expect(results.map((e) => e.output)).toEqual(["Tool error: approval denied for tool 'refund'.", "Tool error: approval denied for tool 'refund'."]);
      expect(client.events().at(-1)).toMatchObject({ type: 'run_completed', output: 'both handled' });
    } finally {
      await quick.close();
    }
  });

  it('an approvalId with the runId of the other sub-run is 404 and decides nothing', async () => {
    const { client, runId, small, large } = await twins();
    const miss = await call(server, 'POST', '/api/chat/approve', { body: { approvalId: small.approvalId, runId: large.runId, decision: 'approve' } });
    expect(miss.status).toBe(404);
    expect(miss.json).toEqual({ error: { code: 'approval_not_found', message: `No approval '${small.approvalId}' is waiting in run '${large.runId}'.` } });
    expect(server.run(runId)!.pendingApprovals().map((p) => p.approvalId).sort()).toEqual([small.approvalId, large.approvalId].sort());
    // With the right sub-run (or the root) it matches.
    expect((await call(server, 'POST', '/api/chat/approve', { body: { approvalId: small.approvalId, runId: small.runId, decision: 'deny' } })).status).toBe(200);
    expect((await call(server, 'POST', '/api/chat/approve', { body: { approvalId: large.approvalId, runId, decision: 'deny' } })).status).toBe(200);
    await client.all();
    expect(refunded).toEqual([]);
  });
});

