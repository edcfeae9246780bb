/**
 * The AI SDK UI message stream when workers run the runs, with real processes: two `troupe
 * serve --workers external` and one `troupe worker` on one PostgreSQL schema. A chat started on
 * node A is streamed from node B too and approved through node B; `ai`'s own client
 * (`DefaultChatTransport` + `readUIMessageStream`) reads both streams, and they carry exactly
 * the chunks a server that runs the run itself sends for the same scripted run.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createServer, type TroupeServer } from '../../src/server/index.js';
import { POSTGRES_URL, usePostgresSchema } from '../store/harnesses.js';
import { call, eventually } from '../server/helpers.js';
import { useCluster } from './cluster-harness.js';
import { toolParts, uiClient, userMessage, type UIClient, type UIResponse } from '../server/ui-stream-client.js';
import { agents } from './agents.js';
import { killAll, startServeProcess, startWorkerProcess, type ServeAddress } from './troupe-process.js';

/** The approval id of the first tool part waiting for a decision. */
async function waitingApproval(response: UIResponse): Promise<string> {
  const message = await response.until((m) => toolParts(m).some((p) => p.state === 'approval-requested'), 60_000);
  return toolParts(message).find((p) => p.state === 'approval-requested')!.approval.id as string;
}

/**
 * The chunks with the run's id written as RUN, so two runs of the same script compare, without
 * the `checkpoint_saved` data parts: the workers' runs are durable (the local server here stores
 * nothing), and where those fall depends on when the store's writes land.
 */
function normalized(response: UIResponse, runId: string): unknown {
  const kept = response.chunks.filter((chunk) => !(chunk.type === 'data-troupe-event' && (chunk.data as { type: string }).type === 'checkpoint_saved'));
  return JSON.parse(JSON.stringify(kept).replaceAll(runId, 'RUN'));
}

describe('the UI message stream with worker processes', () => {
  const freshSchema = usePostgresSchema();
  const servers: TroupeServer[] = [];
  afterEach(async () => {
    await killAll();
    for (const server of servers.splice(0)) await server.close();
  });
  afterAll(killAll);

  it('a chat started on node A, streamed from node B and approved through node B: readUIMessageStream builds the same message from both, chunk for chunk what a local server sends', async () => {
    const schema = await freshSchema();
    const [a, b] = (await Promise.all([startServeProcess(POSTGRES_URL!, schema, 'token-server-a'), startServeProcess(POSTGRES_URL!, schema, 'token-server-b')])) as [ServeAddress, ServeAddress];
    await startWorkerProcess(POSTGRES_URL!, schema, { concurrency: 2, leaseTtlMs: 3_000, pollMs: 100 });
    const client: UIClient = uiClient(await import('ai'));

    const onA = await client.send(client.transportFor(a, { agent: 'approver' }), [userMessage('go')]);
    const approvalId = await waitingApproval(onA);
    const runId = onA.message!.id;
    expect(approvalId).toBe(`${runId}:1.4`);
    const onB = await client.reconnect(b, runId);
    expect(await waitingApproval(onB)).toBe(approvalId);

    const decided = await call(b, 'POST', '/api/chat/approve?wait=30', { body: { approvalId, decision: 'approve' } });
    expect([decided.status, decided.json]).toEqual([200, { runId, approvalId, callId: 'p1', decision: 'approve', statusUrl: `/api/runs/${runId}/waits/${encodeURIComponent(approvalId)}`, applied: true, appliedAt: expect.any(Number) }]);
    await Promise.all([onA.done, onB.done]);

    const message = onA.message!;
    // Where the checkpoint_saved parts fall depends on when the store's writes land; the rest is the script's.
    expect(message.parts.map((part) => (part.type === 'data-troupe-event' ? `data:${(part.data as { type: string }).type}` : part.type)).filter((type) => type !== 'data:checkpoint_saved')).toEqual([
      'step-start', 'data:turn_started', 'tool-work', 'tool-work', 'tool-work', 'tool-work', 'tool-payout', 'data:turn_ended', 'step-start', 'data:turn_started', 'text', 'data:turn_ended',
    ]);
    const metadata = (callId: string) => ({ runId, callId, turn: 1, agent: 'approver', path: ['approver'] });
    expect(toolParts(message)).toEqual([
      ...[0, 1, 2, 3].map((n) => ({ type: 'tool-work', toolCallId: `${runId}:1.${n}`, state: 'output-available', toolMetadata: metadata(`w${n}`), input: { n }, output: n * 2 })),
      { type: 'tool-payout', toolCallId: approvalId, state: 'output-available', toolMetadata: metadata('p1'), input: { amount: 5 }, output: 'paid 5', approval: { id: approvalId } },
    ]);
    expect(message.parts.find((part) => part.type === 'text')).toMatchObject({ type: 'text', text: 'done', state: 'done' });
    expect(message.metadata).toMatchObject({ runId, agent: 'approver', status: 'completed', turns: 2 });
    expect([onA.errors, onB.errors]).toEqual([[], []]);
    // Node B's stream (reattached while the call waited) carries exactly node A's chunks.
    expect(onB.chunks).toEqual(onA.chunks);
    // A second decision on the same call is refused with what stands.
    const again = await call(b, 'POST', '/api/chat/approve', { body: { approvalId, decision: 'deny' } });
    expect([again.status, again.json]).toEqual([409, { error: { code: 'already_decided', message: `Approval '${approvalId}' was already decided: approve by consumer.` } }]);

    // The same scripted run on a server that runs it itself.
    const local = await createServer({ agents });
    servers.push(local);
    const here = await client.send(client.transportFor(local, { agent: 'approver' }), [userMessage('go')]);
    const localApproval = await waitingApproval(here);
    expect((await call(local, 'POST', '/api/chat/approve', { body: { approvalId: localApproval, decision: 'approve' } })).status).toBe(200);
    await here.done;
    expect(normalized(onA, runId)).toEqual(normalized(here, here.message!.id));
  }, 120_000);
});

describe('the UI message stream of a run that parks', () => {
  const cluster = useCluster();

  it('a run parked at its approval (--suspend-approvals) keeps its UI message open; the decision makes a worker resume it and the same message goes on to its end', async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    await c.worker({ suspendOnWait: true, pollMs: 20 });
    const client = uiClient(await import('ai'));
    const response = await client.send(client.transportFor(a, { agent: 'approver' }), [userMessage('go')]);
    const approvalId = await waitingApproval(response);
    const runId = response.message!.id;
    await eventually(() => c.store.runState(runId), (state) => state === 'suspended');
    const decided = await call(b, 'POST', '/api/chat/approve?wait=30', { body: { approvalId, decision: 'approve' } });
    expect([decided.status, decided.json.applied]).toEqual([200, true]);
    await response.done;
    const message = response.message!;
    const dataTypes = message.parts.flatMap((part) => (part.type === 'data-troupe-event' ? [(part.data as { type: string }).type] : [])).filter((type) => type !== 'checkpoint_saved');
    // The resumed run opens its waiting turn again (a new step of the same message), then goes on.
    expect(dataTypes).toEqual(['turn_started', 'run_suspended', 'turn_started', 'turn_ended', 'turn_started', 'turn_ended']);
    expect(toolParts(message).map((part) => [part.toolCallId, part.state, part.output])).toEqual([
      ...[0, 1, 2, 3].map((n) => [`${runId}:1.${n}`, 'output-available', n * 2]),
      [approvalId, 'output-available', 'paid 5'],
    ]);
    expect(message.parts.filter((part) => part.type === 'text')).toEqual([{ type: 'text', text: 'done', state: 'done' }]);
    expect(response.chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop', messageMetadata: { runId, status: 'completed' } });
    expect(response.errors).toEqual([]);
  });
});
