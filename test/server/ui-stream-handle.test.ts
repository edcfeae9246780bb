import type { UIMessage, UIMessageChunk as AiUIMessageChunk } from 'ai';
import type { UIMessageChunk as Ai7UIMessageChunk } from 'ai-7';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, tool, type ApprovalHandler } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import type { WireRunEvent } from '../../src/inspect/wire.js';
import { UIMessageChunkMapper, UI_STREAM_DONE_FRAME, parentToolCallId, toUIMessageStream, uiChunkFrame, type UIMessageChunk } from '../../src/server/index.js';
import { add, calcAgent, twinRefundsFactory } from './agents.js';
import { eventually } from './helpers.js';
import { AI_PACKAGES, aiTitle, textOf, toolParts, type AiModule, type AiPackage } from './ui-stream-client.js';

/** Compile-time check: every chunk troupe emits is an `ai` UIMessageChunk, of `ai` 6 and of `ai` 7. */
const asAiChunk = (chunk: UIMessageChunk): AiUIMessageChunk => chunk;
const asAi7Chunk = (chunk: UIMessageChunk): Ai7UIMessageChunk => chunk;

/** The gated refund agent of agents.ts, with an approval handler. */
function gatedWithHandler(approvalHandler: ApprovalHandler): Agent {
  const refund = tool({
    name: 'refund',
    description: 'Refund an order.',
    parameters: z.object({ orderId: z.string(), cents: z.number() }),
    needsApproval: true,
    execute: async ({ orderId }) => `refunded ${orderId}`,
  });
  return new Agent({ name: 'refunds', model: new ScriptedModel([call('refund', { orderId: 'A1', cents: 6000 }, 'r1'), text('refund handled')]), tools: [refund], approvalHandler });
}

describe.each(AI_PACKAGES)('$label', (pkg: AiPackage) => {
  describe.skipIf(pkg.skip !== undefined)(aiTitle(pkg, 'UI message stream read by the AI SDK'), () => {
    let ai: AiModule;
    beforeAll(async () => {
      ai = await pkg.load();
    });

    /** Each chunk framed as SSE (`uiChunkFrame`), parsed back by the AI SDK's own parser and schema. */
    async function parsedBack(chunks: readonly UIMessageChunk[]): Promise<unknown[]> {
      const body = chunks.map(uiChunkFrame).join('') + UI_STREAM_DONE_FRAME;
      const bytes = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(body));
          controller.close();
        },
      });
      const out: unknown[] = [];
      const reader = ai.parseJsonEventStream({ stream: bytes, schema: ai.uiMessageChunkSchema }).getReader();
      for (;;) {
        const next = await reader.read();
        if (next.done) return out;
        if (!next.value.success) throw next.value.error;
        out.push(next.value.value);
      }
    }

    /** Reads a stream to the end with the AI SDK's reader, keeping the chunks and the last message. */
    async function readAll(stream: ReadableStream<UIMessageChunk>): Promise<{ chunks: UIMessageChunk[]; message: UIMessage | undefined }> {
      const [a, b] = stream.tee();
      const chunks: UIMessageChunk[] = [];
      const reading = (async () => {
        const reader = a.getReader();
        for (;;) {
          const next = await reader.read();
          if (next.done) return;
          chunks.push(next.value);
        }
      })();
      let message: UIMessage | undefined;
      // Compile-time check: the stream itself is a ReadableStream of `ai` chunks.
      const asAi: ReadableStream<AiUIMessageChunk> = b;
      for await (const snapshot of ai.readUIMessageStream({ stream: asAi })) message = snapshot;
      await reading;
      return { chunks, message };
    }

    describe('toUIMessageStream(handle)', () => {
      it('maps a run read straight from its handle; every chunk survives SSE framing and the AI SDK chunk schema', async () => {
        const handle = Runner.stream(calcAgent(), 'add');
        const { chunks, message } = await readAll(toUIMessageStream(handle));
        expect(await parsedBack(chunks)).toEqual(chunks.map(asAiChunk));
        expect(message!.id).toBe(handle.runId);
        expect(toolParts(message).map((p) => [p.toolCallId, p.state, p.output])).toEqual([
          [`${handle.runId}:1.0`, 'output-available', 3],
          [`${handle.runId}:1.1`, 'output-available', 7],
        ]);
        expect(textOf(message)).toBe('done');
        expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
      });

      it("'hold' (default) keeps the decision with handle.approvals: the agent's handler is never asked", async () => {
        const asked: string[] = [];
        const agent = gatedWithHandler((request) => (asked.push(request.call.id), false));
        const handle = Runner.stream(agent, 'refund');
        const stream = toUIMessageStream(handle);
        const done = readAll(stream);
        const waiting = await eventually(() => handle.approvals.pending(), (list) => list.length === 1);
        await new Promise((r) => setTimeout(r, 30));
        expect(asked).toEqual([]);
        expect(handle.approvals.approve(waiting[0]!.approvalId)).toBe(true);
        const { message } = await done;
        expect(toolParts(message)).toEqual([expect.objectContaining({ state: 'output-available', output: 'refunded A1', approval: { id: waiting[0]!.approvalId } })]);
        expect(asked).toEqual([]);
      });

      it("'pass' reads on, so the call falls to the agent's handler (here: deny → output-denied)", async () => {
        const asked: string[] = [];
        const agent = gatedWithHandler((request) => (asked.push(request.call.id), false));
        const { message } = await readAll(toUIMessageStream(Runner.stream(agent, 'refund'), { approvals: 'pass' }));
        expect(asked).toEqual(['r1']);
        expect(toolParts(message)).toEqual([expect.objectContaining({ type: 'tool-refund', state: 'output-denied' })]);
      });

      it('while holding one approval it announces the others waiting in the tree', async () => {
        const handle = Runner.stream(twinRefundsFactory([])(), 'refund both');
        const stream = toUIMessageStream(handle);
        const [a, b] = stream.tee();
        let latest: UIMessage | undefined;
        const reading = (async () => {
          for await (const snapshot of ai.readUIMessageStream({ stream: b as ReadableStream<AiUIMessageChunk> })) latest = snapshot;
        })();
        void a.pipeTo(new WritableStream());
        await eventually(() => toolParts(latest).filter((p) => p.state === 'approval-requested').length, (n) => n === 2);
        for (const approval of handle.approvals.pending()) handle.approvals.approve(approval.approvalId);
        await reading;
        expect(toolParts(latest).filter((p) => p.type === 'tool-refund').map((p) => p.state)).toEqual(['output-available', 'output-available']);
        expect(textOf(latest)).toBe('both handled');
      });

      it("works with the AI SDK's createUIMessageStreamResponse (SSE, protocol header, [DONE])", async () => {
        const handle = Runner.stream(calcAgent(), 'add');
        const response = ai.createUIMessageStreamResponse({ stream: toUIMessageStream(handle) });
        expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
        const body = await response.text();
        expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
        const types = body.split('\n\n').filter((f) => f.startsWith('data: {')).map((f) => JSON.parse(f.slice(6)).type);
        expect(types[0]).toBe('start');
        expect(types.at(-1)).toBe('finish');
      });

      it('cancelling the stream does not cancel the run', async () => {
        const handle = Runner.stream(calcAgent(), 'add');
        const reader = toUIMessageStream(handle).getReader();
        expect((await reader.read()).value).toMatchObject({ type: 'start' });
        await reader.cancel();
        const result = await handle.result();
        expect(result.output).toBe('done');
      });
    });

    describe('UIMessageChunkMapper', () => {
      const base = (runId: string, extra: Record<string, unknown>): WireRunEvent => ({ runId, path: ['a'], agent: 'a', ...extra }) as unknown as WireRunEvent;

      it('repeated call ids within one reply get their own slots (by position)', async () => {
        const agent = new Agent({ name: 'calc', model: new ScriptedModel([batch([['add', { a: 1, b: 1 }, 'same'], ['add', { a: 2, b: 2 }, 'same']]), text('ok')]), tools: [add] });
        const handle = Runner.stream(agent, 'x');
        const { message } = await readAll(toUIMessageStream(handle));
        expect(toolParts(message).map((p) => [p.toolCallId, p.input, p.output, p.toolMetadata.callId])).toEqual([
          [`${handle.runId}:1.0`, { a: 1, b: 1 }, 2, 'same'],
          [`${handle.runId}:1.1`, { a: 2, b: 2 }, 4, 'same'],
        ]);
      });

      it('a reply that was not streamed is sent whole; calls without a reply get fallback ids', () => {
        const mapper = new UIMessageChunkMapper('r');
        const chunks = [
          base('r', { type: 'run_started', input: 'x' }),
          base('r', { type: 'turn_started', turn: 1 }),
          base('r', { type: 'message_completed', turn: 1, message: { role: 'assistant', content: 'whole', reasoning: 'why', toolCalls: [], agent: 'a' } }),
          base('r', { type: 'tool_call_started', turn: 2, call: { id: 'k', name: 'add', arguments: '{"a":1}' } }),
          base('r', { type: 'tool_call_started', turn: 2, call: { id: 'k', name: 'add', arguments: '{"a":2}' } }),
        ].flatMap((event) => mapper.map(event));
        expect(chunks.map((c) => c.type)).toEqual(['start', 'start-step', 'data-troupe-event', 'reasoning-start', 'reasoning-delta', 'reasoning-end', 'text-start', 'text-delta', 'text-end', 'tool-input-available', 'tool-input-available']);
        expect(chunks.filter((c) => c.type === 'tool-input-available').map((c) => (c as { toolCallId: string }).toolCallId)).toEqual(['r:2:k', 'r:2:k#2']);
        expect(mapper.end().map((c) => c.type)).toEqual(['finish-step', 'error', 'finish']);
        expect(mapper.finished).toBe(true);
        expect(mapper.map(base('r', { type: 'turn_started', turn: 3 }))).toEqual([]);
      });

      it("dataEvents filters the data-troupe-event parts ('none' or a list)", () => {
        const events = [base('r', { type: 'run_started', input: 'x' }), base('r', { type: 'turn_started', turn: 1 }), base('r', { type: 'handoff_occurred', turn: 1, from: 'a', to: 'b' })];
        const none = new UIMessageChunkMapper('r', { dataEvents: 'none' });
        expect(events.flatMap((e) => none.map(e)).map((c) => c.type)).toEqual(['start', 'start-step']);
        const some = new UIMessageChunkMapper('r', { dataEvents: ['handoff_occurred'] });
        expect(events.flatMap((e) => some.map(e)).filter((c) => c.type === 'data-troupe-event').map((c) => (c as { data: WireRunEvent }).data.type)).toEqual(['handoff_occurred']);
      });

      it('parentToolCallId maps a sub-run id to its parent call', () => {
        expect(parentToolCallId('run_x/1.0')).toBe('run_x:1.0');
        expect(parentToolCallId('run_x/1.0/2.3')).toBe('run_x/1.0:2.3');
        expect(parentToolCallId('run_x')).toBeUndefined();
      });
    });
  });
});
