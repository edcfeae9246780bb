import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/index.js';
import { ScriptedModel, text } from '../../src/entry/testing.js';
import { createServer, type TroupeServer } from '../../src/server/index.js';
import type { Deferred } from '../helpers.js';
import { brokenAgent, calcAgent, gatedAgent, slowAgentFactory, twinRefundsFactory } from './agents.js';
import { call, eventually } from './helpers.js';
import { AI_PACKAGES, aiTitle, textOf, toolParts, uiClient, userMessage, type AiPackage, type UIClient, type UIResponse } from './ui-stream-client.js';

const gates: Array<Deferred<void>> = [];
const refunded: number[] = [];
/** Reasoning, then two words of text, in one turn. */
const helloAgent = (): Agent => new Agent({ name: 'hello', model: new ScriptedModel([text('Hello there', { reasoning: 'Greet them.' })]) });
const agents = { hello: helloAgent, calc: calcAgent, gated: gatedAgent, broken: brokenAgent, slow: slowAgentFactory(gates), twins: twinRefundsFactory(refunded) };

let server: TroupeServer;

beforeAll(async () => {
  server = await createServer({ agents });
});

afterEach(() => {
  for (const gate of gates.splice(0)) gate.resolve();
  refunded.length = 0;
});

afterAll(async () => {
  await server.close();
});

describe.each(AI_PACKAGES)('$label', (pkg: AiPackage) => {
  describe.skipIf(pkg.skip !== undefined)(aiTitle(pkg, 'UI message stream read by the AI SDK client'), () => {
    let client: UIClient;
    beforeAll(async () => {
      client = uiClient(await pkg.load());
    });

    function send(agent: string, input = 'go', abortSignal?: AbortSignal): Promise<UIResponse> {
      return client.send(client.transportFor(server, { agent }), [userMessage(input)], abortSignal);
    }

    function approve(approvalId: string, decision: 'approve' | 'deny' = 'approve', reason?: string) {
      return call(server, 'POST', '/api/chat/approve', { body: { approvalId, decision, ...(reason ? { reason } : {}) } });
    }

    /** The approval id of the first tool part waiting for a decision. */
    function waitingApproval(response: UIResponse): Promise<string> {
      return response.until((m) => toolParts(m).some((p) => p.state === 'approval-requested')).then((m) => toolParts(m).find((p) => p.state === 'approval-requested')!.approval.id as string);
    }

    describe('UI message stream: wire format', () => {
      it('answers with SSE data frames, the protocol header and [DONE]', async () => {
        const res = await call(server, 'POST', '/api/chat?protocol=ui', { body: { agent: 'hello', input: 'hi' } });
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
        expect(res.headers['x-vercel-ai-ui-message-stream']).toBe('v1');
        expect(res.headers['x-run-id']).toMatch(/^run_/);
        const frames = res.text.split('\n\n').filter((f) => f !== '');
        expect(frames.every((f) => f.startsWith('data: '))).toBe(true);
        expect(frames.at(-1)).toBe('data: [DONE]');
        expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
        const first = JSON.parse(frames[0]!.slice(6));
        expect(first).toEqual({ type: 'start', messageId: res.headers['x-run-id'], messageMetadata: { runId: res.headers['x-run-id'], agent: 'hello' } });
      });

      it('a simple run gives exactly this chunk sequence', async () => {
        const response = await send('hello');
        await response.done;
        expect(response.types).toEqual([
          'start',
          'start-step',
          'data-troupe-event',
          'reasoning-start',
          'reasoning-delta',
          'reasoning-end',
          'text-start',
          'text-delta',
          'text-delta',
          'text-end',
          'data-troupe-event',
          'finish-step',
          'finish',
        ]);
        const ids = new Set(response.chunks.flatMap((c) => ('id' in c && typeof c.id === 'string' ? [c.id] : [])));
        expect(ids.size).toBe(2); // one reasoning part, one text part
        expect(response.chunks.filter((c) => c.type === 'data-troupe-event').map((c) => (c as { data: { type: string } }).data.type)).toEqual(['turn_started', 'turn_ended']);
        expect(response.chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop', messageMetadata: { status: 'completed', turns: 1 } });
        const message = response.message!;
        expect(message.role).toBe('assistant');
        expect(message.id).toMatch(/^run_/);
        expect(message.parts.filter((p) => p.type === 'reasoning')).toEqual([expect.objectContaining({ type: 'reasoning', text: 'Greet them.', state: 'done' })]);
        expect(message.parts.filter((p) => p.type === 'text')).toEqual([expect.objectContaining({ type: 'text', text: 'Hello there', state: 'done' })]);
        expect(message.metadata).toMatchObject({ runId: message.id, agent: 'hello', status: 'completed', usage: { requests: 1 } });
        expect(response.errors).toEqual([]);
      });
    });

    describe('UI message stream: tools', () => {
      it('tool calls become tool parts with their inputs and outputs, one step per turn', async () => {
        const response = await send('calc');
        await response.done;
        const message = response.message!;
        const runId = message.id;
        expect(toolParts(message)).toEqual([
          expect.objectContaining({ type: 'tool-add', toolCallId: `${runId}:1.0`, state: 'output-available', input: { a: 1, b: 2 }, output: 3, toolMetadata: { runId, callId: 'c1', turn: 1, agent: 'calc', path: ['calc'] } }),
          expect.objectContaining({ type: 'tool-add', toolCallId: `${runId}:1.1`, state: 'output-available', input: { a: 3, b: 4 }, output: 7 }),
        ]);
        expect(message.parts.filter((p) => p.type === 'step-start')).toHaveLength(2);
        expect(textOf(message)).toBe('done');
        expect(response.types.filter((t) => t.startsWith('tool-'))).toEqual(['tool-input-available', 'tool-input-available', 'tool-output-available', 'tool-output-available']);
      });

      it('an approval is a tool-approval-request; approving through /api/chat/approve brings the output into the same stream', async () => {
        const response = await send('gated');
        const approvalId = await waitingApproval(response);
        const runId = response.message!.id;
        expect(approvalId).toBe(`${runId}:1.0`);
        const waiting = toolParts(response.message)[0]!;
        expect(waiting).toMatchObject({ type: 'tool-refund', toolCallId: approvalId, state: 'approval-requested', input: { orderId: 'A1', cents: 6000 }, approval: { id: approvalId } });
        expect(response.chunks.at(-1)).toEqual({ type: 'tool-approval-request', approvalId, toolCallId: approvalId });
        // The run waits server-side; the stream stays open.
        expect(server.run(runId)!.pendingApprovals().map((a) => a.approvalId)).toEqual([approvalId]);

        const decided = await approve(approvalId);
        expect(decided.status).toBe(200);
        expect(decided.json).toMatchObject({ runId, approvalId, callId: 'r1', decision: 'approve' });
        await response.done;
        expect(toolParts(response.message)).toEqual([expect.objectContaining({ state: 'output-available', output: 'refunded A1', approval: { id: approvalId } })]);
        expect(textOf(response.message)).toBe('refund handled');
      });

      it('a denied approval ends the tool part as output-denied', async () => {
        const response = await send('gated');
        const approvalId = await waitingApproval(response);
        expect((await approve(approvalId, 'deny', 'not today')).status).toBe(200);
        await response.done;
        expect(toolParts(response.message)).toEqual([expect.objectContaining({ type: 'tool-refund', state: 'output-denied' })]);
        expect(response.types).toContain('tool-output-denied');
        expect(response.types.at(-1)).toBe('finish');
      });

      it('sub-run calls with repeated model call ids get distinct tool parts, linked to their parent call', async () => {
        const response = await send('twins');
        const message = await response.until((m) => toolParts(m).filter((p) => p.state === 'approval-requested').length === 2);
        const runId = message.id;
        const waiting = toolParts(message).filter((p) => p.state === 'approval-requested');
        expect(waiting.map((p) => p.toolCallId).sort()).toEqual([`${runId}/1.0:1.0`, `${runId}/1.1:1.0`]);
        expect(waiting.map((p) => p.toolMetadata.callId)).toEqual(['k1', 'k1']);
        for (const part of waiting) expect((await approve(part.approval.id)).status).toBe(200);
        await response.done;
        const parts = toolParts(response.message);
        expect(new Set(parts.map((p) => p.toolCallId)).size).toBe(4);
        const byId = new Map(parts.map((p) => [p.toolCallId as string, p]));
        expect(byId.get(`${runId}:1.0`)).toMatchObject({ type: 'tool-ask_small', state: 'output-available', output: 'small done' });
        expect(byId.get(`${runId}:1.1`)).toMatchObject({ type: 'tool-ask_large', state: 'output-available', output: 'large done' });
        expect(byId.get(`${runId}/1.0:1.0`)).toMatchObject({ type: 'tool-refund', output: 'refunded 100 cents on A1', toolMetadata: { runId: `${runId}/1.0`, agent: 'small', parentToolCallId: `${runId}:1.0` } });
        expect(byId.get(`${runId}/1.1:1.0`)).toMatchObject({ type: 'tool-refund', output: 'refunded 999999 cents on B2', toolMetadata: { parentToolCallId: `${runId}:1.1` } });
        expect(refunded.sort((a, b) => a - b)).toEqual([100, 999_999]);
        // Sub-run text stays out of the message text; sub-run starts are data parts.
        expect(textOf(response.message)).toBe('both handled');
        const subStarts = response.message!.parts.filter((p) => p.type === 'data-troupe-event' && (p.data as { type: string }).type === 'run_started');
        expect(subStarts.map((p) => (p as { data: { runId: string } }).data.runId).sort()).toEqual([`${runId}/1.0`, `${runId}/1.1`]);
      });
    });

    describe('UI message stream: failures', () => {
      it('a failed run ends with error (the error message) and finish(error)', async () => {
        const response = await send('broken');
        await response.done;
        const message = 'ScriptedModel has no reply for request 1: the script has 0 steps.';
        expect(response.chunks.filter((c) => c.type === 'error')).toEqual([{ type: 'error', errorText: message }]);
        expect(response.types.slice(-2)).toEqual(['error', 'finish']);
        expect(response.chunks.at(-1)).toMatchObject({ finishReason: 'error', messageMetadata: { status: 'failed', error: { code: 'SCRIPT_EXHAUSTED', message } } });
        expect(response.errors.map((e) => e.message)).toEqual([message]);
      });

      it('a cancelled run ends with abort; its open call gets an error output', async () => {
        const response = await send('slow');
        const message = await response.until((m) => toolParts(m).length === 1);
        expect((await call(server, 'POST', '/api/chat/cancel', { body: { runId: message.id } })).status).toBe(202);
        await response.done;
        expect(response.types.at(-1)).toBe('abort');
        expect(response.types).not.toContain('finish');
        expect(toolParts(response.message)[0]).toMatchObject({ type: 'tool-wait', state: 'output-error' });
      });

      it('a client that disconnects leaves the run going; its approval stays with the API', async () => {
        const abort = new AbortController();
        const response = await send('gated', 'go', abort.signal);
        const approvalId = await waitingApproval(response);
        const runId = response.message!.id;
        abort.abort();
        await response.done.catch(() => undefined);
        await eventually(() => server.run(runId)!.subscriberCount, (n) => n === 0);
        expect(server.run(runId)!.finished).toBe(false);
        expect((await approve(approvalId)).status).toBe(200);
        await server.run(runId)!.done;
        expect(server.run(runId)!.status).toBe('completed');
        expect(server.run(runId)!.output).toBe('refund handled');
      });
    });

    describe('UI message stream: AbstractChat (the core of useChat)', () => {
      it('sendMessage streams into chat.messages; the UI approves with addToolApprovalResponse + /api/chat/approve', async () => {
        const chat = new client.PlainChat({ transport: client.transportFor(server, { agent: 'gated' }) });
        const sent = chat.sendMessage({ text: 'refund order A1' });
        const approvalId = await eventually(
          () => toolParts(chat.messages.at(-1)).find((p) => p.state === 'approval-requested')?.approval.id as string | undefined,
          (id) => id !== undefined,
        );
        expect(chat.status).toBe('streaming');
        await chat.addToolApprovalResponse({ id: approvalId!, approved: true });
        expect((await approve(approvalId!)).status).toBe(200);
        await sent;
        expect(chat.status).toBe('ready');
        expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
        const assistant = chat.messages[1]!;
        expect(toolParts(assistant)).toEqual([expect.objectContaining({ state: 'output-available', output: 'refunded A1', approval: expect.objectContaining({ id: approvalId, approved: true }) })]);
        expect(textOf(assistant)).toBe('refund handled');
        expect(assistant.metadata).toMatchObject({ status: 'completed' });
      });

      it('a failed run puts the chat in the error state with the run error', async () => {
        const errors: Error[] = [];
        const chat = new client.PlainChat({ transport: client.transportFor(server, { agent: 'broken' }), onError: (e) => errors.push(e) });
        await chat.sendMessage({ text: 'hi' });
        expect(chat.status).toBe('error');
        expect(chat.error?.message).toBe('ScriptedModel has no reply for request 1: the script has 0 steps.');
        expect(errors).toHaveLength(1);
      });
    });

    describe('UI message stream: request bodies', () => {
      it('takes the last user message text of a useChat body and ignores the other fields', async () => {
        const transport = client.transportFor(server, { agent: 'hello', custom: { any: 'thing' } });
        const history = [userMessage('first'), { id: 'a1', role: 'assistant' as const, parts: [{ type: 'text' as const, text: 'earlier' }] }, { id: 'u2', role: 'user' as const, parts: [{ type: 'text' as const, text: 'line one' }, { type: 'text' as const, text: 'line two' }] }];
        const response = await client.send(transport, history);
        await response.done;
        expect(server.run(response.message!.id)!.input).toBe('line one\nline two');
      });

      it('picks the agent from ?agent= or the only registered agent', async () => {
        const viaQuery = await client.send(client.transportFor(server, {}, '&agent=hello'), [userMessage('hi')]);
        await viaQuery.done;
        expect(server.run(viaQuery.message!.id)!.agentName).toBe('hello');
        const single = await createServer({ agents: { only: helloAgent } });
        try {
          const res = await call(single, 'POST', '/api/chat?protocol=ui', { body: { messages: [userMessage('hi')] } });
          expect(res.status).toBe(200);
          expect(single.run(String(res.headers['x-run-id']))!.agentName).toBe('only');
          expect(res.text).toContain('"type":"finish","finishReason":"stop"');
        } finally {
          await single.close();
        }
      });

      it.each([
        [{ messages: [userMessage('x')] }, '', 400, 'missing_field'],
        [{ agent: 'hello' }, '', 400, 'missing_field'],
        [{ agent: 'hello', input: 'x', messages: [] }, '', 400, 'invalid_body'],
        [{ agent: 'hello', messages: [] }, '', 400, 'invalid_field'],
        [{ agent: 'hello', messages: [userMessage('x'), { id: 'a', role: 'assistant', parts: [] }] }, '', 400, 'invalid_field'],
        [{ agent: 'hello', input: '' }, '', 400, 'invalid_field'],
        [{ agent: 7, input: 'x' }, '', 400, 'invalid_field'],
        [{ agent: 'nope', input: 'x' }, '', 404, 'unknown_agent'],
        [{ agent: 'hello', input: 'x' }, '?protocol=xml', 400, 'invalid_protocol'],
      ])('%j %s → %i %s', async (body, query, status, code) => {
        const before = server.stats().runs;
        const res = await call(server, 'POST', `/api/chat${query || '?protocol=ui'}`, { body });
        expect(res.status).toBe(status);
        expect(res.json.error.code).toBe(code);
        expect(server.stats().runs).toBe(before);
      });

      it('needs the bearer token like every /api route', async () => {
        expect((await call(server, 'POST', '/api/chat?protocol=ui', { token: null, body: { agent: 'hello', input: 'x' } })).status).toBe(401);
      });
    });
  });
});
