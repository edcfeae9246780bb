/**
 * Stored runs through the API: a decision for a suspended run is recorded in its log and the
 * run continues on the server; POST /api/runs/:id/resume continues a cancelled run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, tool } from '../../src/index.js';
import { ScriptedModel, batch, text } from '../../src/entry/testing.js';
import { createServer, type TroupeServer } from '../../src/entry/server.js';
import { call, eventually } from './helpers.js';

let server: TroupeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ran: string[] = [];
const refund = tool({ name: 'refund', description: 'd', parameters: z.object({ cents: z.number() }), needsApproval: true, execute: ({ cents }, ctx) => (ran.push(ctx.callId), `refunded ${cents}`) });

describe('stored runs on the server', () => {
  it('POST /api/chat/approve for a suspended run records the decision and resumes it here; only that call runs', async () => {
    ran.length = 0;
    const store = new MemoryCheckpointStore();
    server = await createServer({ agents: { desk: () => new Agent({ name: 'desk', model: new ScriptedModel([text('done after refund')]), tools: [refund] }) }, checkpointStore: store });
    expect(server.recovered).toEqual([]);
    // Parked elsewhere (e.g. a batch job) while the server was already up.
    const parked = Runner.stream(new Agent({ name: 'desk', model: new ScriptedModel([batch([['refund', { cents: 9 }, 'r1']])]), tools: [refund] }), 'go', {
      checkpoint: { store, runId: 'job-1', suspendOnWait: true },
    });
    await parked.result().catch(() => undefined);
    expect(store.load('job-1')!.head.status).toBe('suspended');

    const answer = await call(server, 'POST', '/api/chat/approve', { body: { approvalId: 'job-1:1.0', decision: 'approve' } });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ runId: 'job-1', approvalId: 'job-1:1.0', callId: 'r1', decision: 'approve', resumed: true });
    const done = await eventually(() => call(server!, 'GET', '/api/runs/job-1'), (r) => r.json?.status === 'completed');
    expect(done.json.output).toBe('done after refund');
    expect(ran).toEqual(['r1']);
    expect(store.load('job-1')!.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'approval_request', 'approval_decision', 'result', 'turn_end', 'reply', 'turn_end']);
  });

  it('POST /api/chat/approve with edited args for a suspended run: invalid ones are 400 and write nothing; valid ones are stored with the decision and run', async () => {
    ran.length = 0;
    const store = new MemoryCheckpointStore();
    const cents: number[] = [];
    const counted = tool({ name: 'refund', description: 'd', parameters: z.object({ cents: z.number().max(500) }), needsApproval: true, execute: (args) => (cents.push(args.cents), `refunded ${args.cents}`) });
    server = await createServer({ agents: { desk: () => new Agent({ name: 'desk', model: new ScriptedModel([text('done after refund')]), tools: [counted] }) }, checkpointStore: store });
    const parked = Runner.stream(new Agent({ name: 'desk', model: new ScriptedModel([batch([['refund', { cents: 400 }, 'r1']])]), tools: [counted] }), 'go', {
      checkpoint: { store, runId: 'job-2', suspendOnWait: true },
    });
    await parked.result().catch(() => undefined);
    const before = store.load('job-2')!.entries.length;

    const invalid = await call(server, 'POST', '/api/chat/approve', { body: { approvalId: 'job-2:1.0', decision: 'approve', args: { cents: 9_000 } } });
    expect(invalid.status).toBe(400);
    expect(invalid.json).toEqual({ error: { code: 'invalid_args', message: "Invalid arguments for tool 'refund': cents: Too big: expected number to be <=500" } });
    expect(store.load('job-2')!.entries).toHaveLength(before);

    const answer = await call(server, 'POST', '/api/chat/approve', { body: { approvalId: 'job-2:1.0', decision: 'approve', args: { cents: 250 } } });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ runId: 'job-2', approvalId: 'job-2:1.0', callId: 'r1', decision: 'approve', resumed: true });
    await eventually(() => call(server!, 'GET', '/api/runs/job-2'), (r) => r.json?.status === 'completed');
    expect(cents).toEqual([250]);
    expect(store.load('job-2')!.entries[before]).toMatchObject({ kind: 'approval_decision', approved: true, by: 'api', editedArguments: '{"cents":250}' });
  });

  it('POST /api/runs/:id/resume continues a cancelled run; errors are typed', async () => {
    const store = new MemoryCheckpointStore();
    const cancelled = Runner.stream(new Agent({ name: 'desk', model: new ScriptedModel([text('never')]) }), 'go', { checkpoint: { store, runId: 'int-1' } });
    cancelled.cancel('stop');
    await cancelled.result().catch(() => undefined);
    expect(store.load('int-1')!.head.status).toBe('cancelled');
    server = await createServer({ agents: { desk: () => new Agent({ name: 'desk', model: new ScriptedModel([text('resumed fine')]) }) }, checkpointStore: store });
    expect(server.recovered).toEqual([]);
    const resumed = await call(server, 'POST', '/api/runs/int-1/resume');
    expect(resumed.status).toBe(202);
    expect(resumed.json).toEqual({ runId: 'int-1', agent: 'desk', status: 'running' });
    await eventually(() => call(server!, 'GET', '/api/runs/int-1'), (r) => r.json?.status === 'completed');
    expect(store.load('int-1')!.head).toMatchObject({ status: 'completed', output: 'resumed fine' });

    const missing = await call(server, 'POST', '/api/runs/nope/resume');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ error: { code: 'run_not_found', message: "No stored run 'nope'." } });
    const wrongMethod = await call(server, 'GET', '/api/runs/int-1/resume');
    expect(wrongMethod.status).toBe(405);
    const notLive = await call(server, 'GET', '/api/runs/nope/stream');
    expect(notLive.status).toBe(404);
    expect(notLive.json.error.message).toBe("Run 'nope' is not running on this server (POST /api/runs/:id/resume continues a stored run).");
  });
});
