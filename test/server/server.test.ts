import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type TroupeServer } from '../../src/server/index.js';
import type { PendingApprovalView } from '../../src/server/index.js';
import type { ApprovalRecord, WireRecord, WireRunEvent } from '../../src/inspect/wire.js';
import type { Deferred } from '../helpers.js';
import { brokenAgent, calcAgent, gatedAgent, slowAgentFactory, twinRefundsFactory } from './agents.js';
import { call, eventually, openChat, openSse, trace, type SseClient } from './helpers.js';

const gates: Array<Deferred<void>> = [];
/** Cents of every refund the `twins` agent really ran (reset per test). */
const refunded: number[] = [];
const agents = { calc: calcAgent, gated: gatedAgent, broken: brokenAgent, slow: slowAgentFactory(gates), twins: twinRefundsFactory(refunded) };
const open: SseClient[] = [];

let server: TroupeServer;
let pageDir: string;

beforeAll(async () => {
  pageDir = mkdtempSync(join(tmpdir(), 'troupe-page-'));
  writeFileSync(join(pageDir, 'index.html'), '<!doctype html><title>inspector</title>');
  server = await createServer({ agents, inspectorDir: pageDir });
});

afterEach(() => {
  for (const client of open.splice(0)) client.close();
  for (const gate of gates.splice(0)) gate.resolve();
  refunded.length = 0;
});

afterAll(async () => {
  await server.close();
});

const chat = (target: TroupeServer, agent: string, input = 'go'): Promise<SseClient> => openChat(target, open, agent, input);

describe('server: defaults', () => {
  it('binds loopback and generates a long random token', () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.token.length).toBeGreaterThanOrEqual(32);
    expect(server.inspectorUrl).toBe(`${server.url}/#token=${encodeURIComponent(server.token)}`);
  });
});

describe('server: auth', () => {
  it.each([
    ['GET', '/api/runs'],
    ['GET', '/api/agents'],
    ['GET', '/api/inspect'],
    ['GET', '/api/runs/x'],
    ['POST', '/api/chat'],
    ['POST', '/api/chat/approve'],
    ['POST', '/api/chat/cancel'],
    ['GET', '/api/nope'],
  ])('%s %s without a token is 401', async (method, path) => {
    const res = await call(server, method, path, { token: null, ...(method === 'POST' ? { body: { agent: 'calc', input: 'x' } } : {}) });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: { code: 'unauthorized', message: 'Missing or invalid bearer token.' } });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="troupe"');
  });

  it('a wrong token or scheme is 401 and starts nothing', async () => {
    const before = server.stats().runs;
    expect((await call(server, 'POST', '/api/chat', { token: 'wrong-token-123', body: { agent: 'calc', input: 'x' } })).status).toBe(401);
    expect((await call(server, 'GET', '/api/runs', { token: null, headers: { authorization: `Basic ${server.token}` } })).status).toBe(401);
    expect(server.stats().runs).toBe(before);
  });

  it('the page itself needs no token', async () => {
    const res = await call(server, 'GET', '/', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect((await call(server, 'GET', '/../package.json', { token: null })).status).toBe(404);
    expect((await call(server, 'GET', '/%2e%2e/package.json', { token: null })).status).toBe(404);
  });
});

describe('server: request validation', () => {
  const cases: Array<[string, string, string | object, number, string, string]> = [
    ['/api/chat', 'malformed JSON', '{"agent": "calc", ', 400, 'malformed_json', 'Request body is not valid JSON.'],
    ['/api/chat', 'empty body', '', 400, 'empty_body', 'Request body is empty; expected a JSON object.'],
    ['/api/chat', 'an array', '[1, 2]', 400, 'invalid_body', 'Request body must be a JSON object.'],
    ['/api/chat', 'an unknown field', { agent: 'calc', input: 'x', model: 'gpt' }, 400, 'unknown_field', "Unknown field 'model'. Allowed fields: agent, input."],
    ['/api/chat', 'unknown fields', { agent: 'calc', input: 'x', a: 1, b: 2 }, 400, 'unknown_field', "Unknown fields 'a', 'b'. Allowed fields: agent, input."],
    ['/api/chat', 'a missing field', { agent: 'calc' }, 400, 'missing_field', "Missing field 'input'."],
    ['/api/chat', 'a mistyped field', { agent: 'calc', input: 42 }, 400, 'invalid_field', "Field 'input' must be a string."],
    ['/api/chat', 'an empty agent', { agent: '', input: 'x' }, 400, 'invalid_field', "Field 'agent' must not be empty."],
    ['/api/chat', 'an unknown agent', { agent: 'nobody', input: 'x' }, 404, 'unknown_agent', "Unknown agent 'nobody'. Registered agents: calc, gated, broken, slow, twins."],
    ['/api/chat/approve', 'a bad decision', { runId: 'r', callId: 'c', decision: 'yes' }, 400, 'invalid_field', 'Field \'decision\' must be "approve" or "deny".'],
    ['/api/chat/approve', 'an unknown field', { runId: 'r', callId: 'c', decision: 'approve', note: 'hi' }, 400, 'unknown_field', "Unknown field 'note'. Allowed fields: approvalId, runId, callId, decision, reason, args."],
    ['/api/chat/approve', 'args with deny', { approvalId: 'a', decision: 'deny', args: { cents: 1 } }, 400, 'invalid_field', 'Field \'args\' is only allowed with decision "approve".'],
    ['/api/chat/approve', 'args that are not an object', { approvalId: 'a', decision: 'approve', args: [1] }, 400, 'invalid_field', "Field 'args' must be a JSON object: the call's arguments as approved."],
    ['/api/chat/approve', 'no decision', { approvalId: 'a' }, 400, 'missing_field', "Missing field 'decision'."],
    ['/api/chat/approve', 'neither approvalId nor callId', { runId: 'r', decision: 'approve' }, 400, 'invalid_request', "Give 'approvalId', or 'runId' and 'callId'."],
    ['/api/chat/approve', 'a callId without runId', { callId: 'c', decision: 'approve' }, 400, 'invalid_request', "Give 'approvalId', or 'runId' and 'callId'."],
    ['/api/chat/approve', 'an empty approvalId', { approvalId: '', decision: 'approve' }, 400, 'invalid_field', "Field 'approvalId' must not be empty."],
    ['/api/chat/approve', 'a mistyped approvalId', { approvalId: 7, decision: 'approve' }, 400, 'invalid_field', "Field 'approvalId' must be a string."],
    ['/api/chat/approve', 'a mistyped reason', { approvalId: 'a', decision: 'deny', reason: ['no'] }, 400, 'invalid_field', "Field 'reason' must be a string."],
    ['/api/chat/approve', 'a reason over 2,000 characters', { approvalId: 'a', decision: 'deny', reason: 'x'.repeat(2_001) }, 400, 'invalid_field', "Field 'reason' is longer than 2000 characters."],
    ['/api/chat/approve', 'a reason with approve', { approvalId: 'a', decision: 'approve', reason: 'fine' }, 400, 'invalid_field', 'Field \'reason\' is only allowed with decision "deny".'],
    ['/api/chat/approve', 'an unknown approvalId', { approvalId: 'nope', decision: 'approve' }, 404, 'approval_not_found', "No approval 'nope' is waiting."],
    ['/api/chat/approve', 'an unknown run and call', { runId: 'run_missing', callId: 'r1', decision: 'approve' }, 404, 'approval_not_found', "No approval is waiting for call 'r1' in run 'run_missing'."],
    ['/api/chat/cancel', 'an unknown field', { runId: 'r', reason: 'x' }, 400, 'unknown_field', "Unknown field 'reason'. Allowed fields: runId."],
    ['/api/chat/cancel', 'malformed JSON', '{runId: r}', 400, 'malformed_json', 'Request body is not valid JSON.'],
  ];
  it.each(cases)('%s with %s → %i', async (path, _what, body, status, code, message) => {
    const res = await call(server, 'POST', path, { body });
    expect(res.status).toBe(status);
    expect(res.json).toEqual({ error: { code, message } });
  });

  it('refuses form posts and wrong methods', async () => {
    const form = await call(server, 'POST', '/api/chat', { body: 'agent=calc', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
    const wrong = await call(server, 'GET', '/api/chat');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('POST');
    expect((await call(server, 'GET', '/api/nope')).json).toEqual({ error: { code: 'not_found', message: 'No API endpoint /api/nope.' } });
  });
});

describe('server: chat stream', () => {
  it('streams a scripted run as SSE in order, with ids, event names and a run id header', async () => {
    const client = await chat(server, 'calc');
    expect(client.status).toBe(200);
    expect(client.res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const runId = client.res.headers['x-run-id'] as string;
    expect(runId).toMatch(/^run_/);
    const frames = await client.all();
    const events = client.events();
    expect(trace(events)).toEqual([
      'run_started',
      'turn_started',
      'message_completed',
      'tool_call_started:c1',
      'tool_call_started:c2',
      'tool_call_completed:c1',
      'tool_call_completed:c2',
      'turn_ended',
      'turn_started',
      'message_completed',
      'turn_ended',
      'run_completed',
    ]);
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => String(i)));
    expect(frames.map((f) => f.event)).toEqual(events.map((e) => e.type));
    expect(events.every((e) => e.runId === runId)).toBe(true);
    expect(events.find((e) => e.type === 'tool_call_completed')).toMatchObject({ call: { id: 'c1', name: 'add', arguments: '{"a":1,"b":2}' }, result: 3, output: '3', isError: false });
    expect(events.at(-1)).toMatchObject({ type: 'run_completed', output: 'done', turns: 2 });
    const summary = await call(server, 'GET', `/api/runs/${runId}`);
    expect(summary.json).toMatchObject({ runId, agent: 'calc', status: 'completed', output: 'done', turns: 2, pendingApprovals: [] });
    expect(summary.json.eventLog).toEqual(events);
    const list = await call(server, 'GET', '/api/runs');
    expect(list.json.runs[0]).toMatchObject({ runId, status: 'completed' });
  });

  it('serialises errors as {name, code, message}', async () => {
    const client = await chat(server, 'broken');
    await client.all();
    const failed = client.events().at(-1)!;
    expect(failed.type).toBe('run_failed');
    expect(failed.error).toEqual({ name: 'ScriptExhausted', code: 'SCRIPT_EXHAUSTED', message: 'ScriptedModel has no reply for request 1: the script has 0 steps.' });
    const runId = client.res.headers['x-run-id'] as string;
    expect((await call(server, 'GET', `/api/runs/${runId}`)).json).toMatchObject({ status: 'failed', error: { code: 'SCRIPT_EXHAUSTED' } });
  });

  it('GET /api/runs/:id is 404 for unknown runs', async () => {
    const res = await call(server, 'GET', '/api/runs/run_nope');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: { code: 'run_not_found', message: "No run 'run_nope'." } });
  });
});

describe('server: approvals', () => {
  it('holds approval_required (no functions on the wire) until POST /api/chat/approve', async () => {
    const client = await chat(server, 'gated');
    const runId = client.res.headers['x-run-id'] as string;
    await client.until((frames) => frames.some((f) => f.event === 'approval_required'));
    // Still waiting well after the event was delivered: the server did not pull past it.
    await new Promise((r) => setTimeout(r, 100));
    const pending = await call(server, 'GET', `/api/runs/${runId}`);
    expect(pending.json.pendingApprovals).toHaveLength(1);
    const [waiting] = pending.json.pendingApprovals;
    expect(waiting).toEqual({
      approvalId: waiting.approvalId,
      runId,
      callId: 'r1',
      tool: 'refund',
      args: { orderId: 'A1', cents: 6000 },
      path: ['refunds'],
      agent: 'refunds',
      since: waiting.since,
      deadline: waiting.since + 300_000,
    });
    expect(typeof waiting.approvalId).toBe('string');
    const approval = client.events().find((e) => e.type === 'approval_required')!;
    expect(approval).toEqual({
      type: 'approval_required',
      runId,
      approvalId: waiting.approvalId,
      path: ['refunds'],
      agent: 'refunds',
      turn: 1,
      call: { id: 'r1', name: 'refund', arguments: '{"orderId":"A1","cents":6000}' },
      args: { orderId: 'A1', cents: 6000 },
    });
    expect(client.events().at(-1)!.type).toBe('approval_required');

    const res = await call(server, 'POST', '/api/chat/approve', { body: { approvalId: waiting.approvalId, decision: 'approve' } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ runId, approvalId: waiting.approvalId, callId: 'r1', decision: 'approve' });
    await client.all();
    expect(trace(client.events()).slice(3)).toEqual(['approval_required:r1', 'tool_call_started:r1', 'tool_call_completed:r1', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    expect(client.events().find((e) => e.type === 'tool_call_completed')).toMatchObject({ output: 'refunded A1', isError: false });
    // Decided: a second decision matches nothing.
    const again = await call(server, 'POST', '/api/chat/approve', { body: { approvalId: waiting.approvalId, decision: 'deny' } });
    expect(again.status).toBe(404);
    expect(again.json).toEqual({ error: { code: 'approval_not_found', message: `No approval '${waiting.approvalId}' is waiting.` } });
  });

  it('approve with edited args: invalid ones are 400 invalid_args and the call keeps waiting; valid ones run instead of the model\'s', async () => {
    const client = await chat(server, 'gated');
    const runId = client.res.headers['x-run-id'] as string;
    await client.until((frames) => frames.some((f) => f.event === 'approval_required'));
    const approvalId = server.run(runId)!.pendingApprovals()[0]!.approvalId;
    const invalid = await call(server, 'POST', '/api/chat/approve', { body: { approvalId, decision: 'approve', args: { orderId: 'A1', cents: 'lots' } } });
    expect(invalid.status).toBe(400);
    expect(invalid.json).toEqual({ error: { code: 'invalid_args', message: "Invalid arguments for tool 'refund': cents: Invalid input: expected number, received string" } });
    expect(server.run(runId)!.pendingApprovals().map((a) => a.approvalId)).toEqual([approvalId]);

    const res = await call(server, 'POST', '/api/chat/approve', { body: { approvalId, decision: 'approve', args: { orderId: 'B2', cents: 100 } } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ runId, approvalId, callId: 'r1', decision: 'approve' });
    await client.all();
    expect(client.events().find((e) => e.type === 'tool_call_completed')).toMatchObject({ output: 'refunded B2', isError: false });
  });

  it('runId + callId still decides a call of the root run; deny gives the model the denial', async () => {
    const client = await chat(server, 'gated');
    const runId = client.res.headers['x-run-id'] as string;
    await client.until((frames) => frames.some((f) => f.event === 'approval_required'));
    const approvalId = server.run(runId)!.pendingApprovals()[0]!.approvalId;
    const res = await call(server, 'POST', '/api/chat/approve', { body: { runId, callId: 'r1', decision: 'deny' } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ runId, approvalId, callId: 'r1', decision: 'deny' });
    await client.all();
    const completed = client.events().find((e) => e.type === 'tool_call_completed')!;
    expect(completed).toMatchObject({ isError: true, output: "Tool error: approval denied for tool 'refund'." });
    expect(trace(client.events())).not.toContain('tool_call_started:r1');
  });

  it('a denial reason reaches the model', async () => {
    const client = await chat(server, 'gated');
    const runId = client.res.headers['x-run-id'] as string;
    await client.until((frames) => frames.some((f) => f.event === 'approval_required'));
    const approvalId = server.run(runId)!.pendingApprovals()[0]!.approvalId;
    const res = await call(server, 'POST', '/api/chat/approve', { body: { approvalId, decision: 'deny', reason: 'over the limit' } });
    expect(res.status).toBe(200);
    await client.all();
    expect(client.events().find((e) => e.type === 'tool_call_completed')).toMatchObject({ isError: true, output: "Tool error: approval denied for tool 'refund': over the limit" });
  });

  it('approve is 404 when nothing matches', async () => {
    const client = await chat(server, 'gated');
    const runId = client.res.headers['x-run-id'] as string;
    await client.until((frames) => frames.some((f) => f.event === 'approval_required'));
    const approvalId = server.run(runId)!.pendingApprovals()[0]!.approvalId;
    const noCall = await call(server, 'POST', '/api/chat/approve', { body: { runId, callId: 'other', decision: 'approve' } });
    expect(noCall.status).toBe(404);
    expect(noCall.json).toEqual({ error: { code: 'approval_not_found', message: `No approval is waiting for call 'other' in run '${runId}'.` } });
    const wrongRun = await call(server, 'POST', '/api/chat/approve', { body: { approvalId, runId: 'run_other', decision: 'approve' } });
    expect(wrongRun.status).toBe(404);
    expect(wrongRun.json).toEqual({ error: { code: 'approval_not_found', message: `No approval '${approvalId}' is waiting in run 'run_other'.` } });
    const wrongCall = await call(server, 'POST', '/api/chat/approve', { body: { approvalId, callId: 'other', decision: 'approve' } });
    expect(wrongCall.status).toBe(404);
    expect(wrongCall.json).toEqual({ error: { code: 'approval_not_found', message: `No approval '${approvalId}' is waiting for call 'other'.` } });
    // Nothing was decided by the misses.
    expect(server.run(runId)!.pendingApprovals().map((p) => p.approvalId)).toEqual([approvalId]);
    const ok = await call(server, 'POST', '/api/chat/approve', { body: { approvalId, runId, callId: 'r1', decision: 'deny' } });
    expect(ok.status).toBe(200);
    await client.all();
  });

  it('approvalTimeoutMs auto-denies an undecided call', async () => {
    const quick = await createServer({ agents, approvalTimeoutMs: 120, inspect: 'off' });
    try {
      const records: WireRecord[] = [];
      const unsubscribe = quick.feed.subscribe((r) => records.push(r));
      const started = Date.now();
      const client = await chat(quick, 'gated');
      await client.all();
      const elapsed = Date.now() - started;
      unsubscribe();
      const events = client.events();
      expect(trace(events)).toContain('approval_required:r1');
      expect(trace(events)).not.toContain('tool_call_started:r1');
      expect(events.find((e) => e.type === 'tool_call_completed')).toMatchObject({ isError: true, output: "Tool error: approval denied for tool 'refund'." });
      expect(events.at(-1)!.type).toBe('run_completed');
      expect(elapsed).toBeGreaterThanOrEqual(115);
      const approvals = records.filter((r): r is ApprovalRecord => r.kind === 'approval');
      expect(approvals.map((a) => a.state)).toEqual(['pending', 'timed_out']);
      expect(approvals[0]!.deadline! - approvals[0]!.since).toBe(120);
      const approvalId = events.find((e) => e.type === 'approval_required')!.approvalId;
      expect(approvals.map((a) => a.approvalId)).toEqual([approvalId, approvalId]);
    } finally {
      await quick.close();
    }
  });
});

describe('server: disconnects and cancellation', () => {
  it('a client that disconnects does not stop the run, and nothing stays attached', async () => {
    const client = await chat(server, 'slow');
    const runId = client.res.headers['x-run-id'] as string;
    await client.until((frames) => frames.some((f) => f.event === 'tool_call_started'));
    client.close();
    await eventually(() => server.stats().chatClients, (n) => n === 0);
    expect(server.run(runId)!.status).toBe('running');
    gates.at(-1)!.resolve();
    const done = await eventually(() => call(server, 'GET', `/api/runs/${runId}`), (r) => r.json.status !== 'running');
    expect(done.json).toMatchObject({ status: 'completed', output: 'waited' });
    const log = trace(done.json.eventLog);
    expect(log).toContain('tool_call_completed:w1');
    expect(log.at(-1)).toBe('run_completed');
  });

  it('a client that disconnects at an approval leaves it to the API (not denied)', async () => {
    const client = await chat(server, 'gated');
    const runId = client.res.headers['x-run-id'] as string;
    await client.until((frames) => frames.some((f) => f.event === 'approval_required'));
    client.close();
    await eventually(() => server.stats().chatClients, (n) => n === 0);
    await new Promise((r) => setTimeout(r, 80));
    expect(server.run(runId)!.pendingApprovals().map((p) => p.callId)).toEqual(['r1']);
    expect((await call(server, 'POST', '/api/chat/approve', { body: { runId, callId: 'r1', decision: 'approve' } })).status).toBe(200);
    const done = await eventually(() => call(server, 'GET', `/api/runs/${runId}`), (r) => r.json.status !== 'running');
    expect(done.json.status).toBe('completed');
    expect(done.json.eventLog.find((e: { type: string }) => e.type === 'tool_call_completed')).toMatchObject({ isError: false, output: 'refunded A1' });
  });

  it('POST /api/chat/cancel ends the run with run_failed(RunCancelled); 409 once finished', async () => {
    const client = await chat(server, 'slow');
    const runId = client.res.headers['x-run-id'] as string;
    await client.until((frames) => frames.some((f) => f.event === 'tool_call_started'));
    const res = await call(server, 'POST', '/api/chat/cancel', { body: { runId } });
    expect(res.status).toBe(202);
    await client.all();
    expect(client.events().at(-1)).toMatchObject({ type: 'run_failed', error: { name: 'RunCancelled', code: 'RUN_CANCELLED', message: 'Run cancelled: cancelled via API' } });
    expect(server.run(runId)!.status).toBe('cancelled');
    const again = await call(server, 'POST', '/api/chat/cancel', { body: { runId } });
    expect(again.status).toBe(409);
    expect((await call(server, 'POST', '/api/chat/cancel', { body: { runId: 'run_missing' } })).status).toBe(404);
  });

  it('cancel while an approval is held releases it as cancelled', async () => {
    const client = await chat(server, 'gated');
    const runId = client.res.headers['x-run-id'] as string;
    await client.until((frames) => frames.some((f) => f.event === 'approval_required'));
    expect((await call(server, 'POST', '/api/chat/cancel', { body: { runId } })).status).toBe(202);
    await client.all();
    const events = client.events();
    expect(events.find((e) => e.type === 'tool_call_completed')).toMatchObject({ isError: true, output: 'Tool error: run cancelled: cancelled via API' });
    expect(events.at(-1)).toMatchObject({ type: 'run_failed', error: { code: 'RUN_CANCELLED' } });
    const approvals = server.feed.historyOf(runId).filter((r): r is ApprovalRecord => r.kind === 'approval');
    expect(approvals.map((a) => a.state)).toEqual(['pending', 'cancelled']);
  });
});
