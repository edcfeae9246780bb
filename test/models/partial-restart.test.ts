import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, tool, type RunEvent } from '../../src/index.js';
import { aiSdkModel } from '../../src/models/ai-sdk.js';
import type { ModelRequest, ModelStreamPart } from '../../src/models/model.js';
import { serializeRunEvent } from '../../src/server/serialize.js';
import { UIMessageChunkMapper } from '../../src/server/ui-chunks.js';
import { collect, deferred } from '../helpers.js';
import { fakeLanguageModel, finish } from './fake-language-model.js';
import { chunk, startChatServer, textReply, toolCallsReply, type ChatServer } from './openai-server.js';

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request = (): ModelRequest => ({ agent: 'a', system: '', messages: [{ role: 'user', content: 'hi' }], tools: [], settings: {}, signal: new AbortController().signal });
const terminated = () => new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });

async function drain(stream: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

const echo = tool({ name: 'echo', description: 'Echo a text.', parameters: z.object({ text: z.string() }), execute: ({ text }) => `echo: ${text}` });

/** Event types with the delta text, so the order of voided and kept deltas shows. */
const order = (events: readonly RunEvent[]) =>
  events.map((e) => (e.type === 'text_delta' ? `text_delta:${e.delta}` : e.type === 'output_discarded' ? `output_discarded:${e.attempt}` : e.type));

describe('partial-output restarts', () => {
  it('the adapter retries an attempt that failed after streaming, announcing a discard first', async () => {
    const model = fakeLanguageModel([
      {
        parts: [
          { type: 'text-delta', id: 't', delta: 'Hal' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'echo', input: '{"text":"x"}' },
        ],
        error: terminated(),
      },
      { parts: [{ type: 'text-delta', id: 't', delta: 'Hello' }, finish()] },
    ]);
    const parts = await drain(aiSdkModel(model, { initialRetryDelayMs: 0 }).stream(request()));
    expect(parts).toEqual([
      { type: 'text_delta', delta: 'Hal' },
      { type: 'tool_call', call: { id: 'c1', name: 'echo', arguments: '{"text":"x"}' } },
      { type: 'discard', attempt: 1, reason: "Model provider 'fake.chat' (model 'fake-model') failed: terminated" },
      { type: 'text_delta', delta: 'Hello' },
      { type: 'finish', usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, finishReason: 'stop' },
    ]);
    expect(model.calls).toHaveLength(2);
  });

  it('voided calls never run: the run emits output_discarded with what was voided, then the new attempt', async () => {
    const model = fakeLanguageModel([
      {
        parts: [
          { type: 'reasoning-delta', id: 'r', delta: 'hmm' },
          { type: 'text-delta', id: 't', delta: 'Calling' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'echo', input: '{"text":"void"}' },
        ],
        error: terminated(),
      },
      { parts: [{ type: 'tool-call', toolCallId: 'c2', toolName: 'echo', input: '{"text":"kept"}' }, finish('tool-calls')] },
      { parts: [{ type: 'text-delta', id: 't', delta: 'done' }, finish()] },
    ]);
    const agent = new Agent({ name: 'a', model: aiSdkModel(model, { initialRetryDelayMs: 0 }), tools: [echo] });
    const events = await collect(Runner.stream(agent, 'go'));
    expect(order(events)).toEqual([
      'run_started',
      'turn_started',
      'reasoning_delta',
      'text_delta:Calling',
      'output_discarded:1',
      'message_completed',
      'tool_call_started',
      'tool_call_completed',
      'turn_ended',
      'turn_started',
      'text_delta:done',
      'message_completed',
      'turn_ended',
      'run_completed',
    ]);
    const discarded = events.find((e) => e.type === 'output_discarded')!;
    expect(discarded).toMatchObject({
      turn: 1,
      attempt: 1,
      reason: "Model provider 'fake.chat' (model 'fake-model') failed: terminated",
      voided: { text: 'Calling', reasoning: 'hmm', toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"text":"void"}' }] },
    });
    const completedCalls = events.filter((e) => e.type === 'tool_call_completed').map((e) => (e as { output: string }).output);
    expect(completedCalls).toEqual(['echo: kept']);
    const first = events.find((e) => e.type === 'message_completed')!;
    expect(first).toMatchObject({ message: { content: '', toolCalls: [{ id: 'c2' }] } });
  });

  it('over the loopback server: a connection dropped mid-reply is retried, the voided text announced first', async () => {
    // The connection drops once the run has streamed the partial text.
    const streamed = deferred<void>();
    server = await startChatServer([
      { kind: 'sse', chunks: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Partial ' }), chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'echo', arguments: '{"te' } }] })], drop: streamed.promise },
      toolCallsReply([{ id: 'call_2', name: 'echo', args: { text: 'again' } }]),
      textReply('All done.'),
    ]);
    const provider = createOpenAICompatible({ baseURL: server.baseURL, name: 'local', apiKey: 'k' });
    const agent = new Agent({ name: 'a', model: aiSdkModel(provider('test-model'), { initialRetryDelayMs: 1, maxRetryDelayMs: 2 }), tools: [echo] });
    const events = await collect(Runner.stream(agent, 'go'), (event) => {
      if (event.type === 'text_delta') streamed.resolve();
    });
    expect(order(events)).toEqual([
      'run_started',
      'turn_started',
      'text_delta:Partial ',
      'output_discarded:1',
      'message_completed',
      'tool_call_started',
      'tool_call_completed',
      'turn_ended',
      'turn_started',
      'text_delta:All ',
      'text_delta:done.',
      'message_completed',
      'turn_ended',
      'run_completed',
    ]);
    expect(events.find((e) => e.type === 'output_discarded')).toMatchObject({ attempt: 1, voided: { text: 'Partial ', reasoning: '', toolCalls: [] } });
    expect(server.requests).toHaveLength(3);
    expect(events.at(-1)).toMatchObject({ type: 'run_completed', output: 'All done.' });
  });

  it('reasoning blocks of a voided attempt are dropped with it', async () => {
    const model = fakeLanguageModel([
      {
        parts: [
          { type: 'reasoning-start', id: 'r' },
          { type: 'reasoning-delta', id: 'r', delta: 'first try', providerMetadata: { anthropic: { signature: 'void-sig' } } },
          { type: 'reasoning-end', id: 'r' },
        ],
        error: terminated(),
      },
      { parts: [{ type: 'reasoning-start', id: 'r' }, { type: 'reasoning-delta', id: 'r', delta: 'second', providerMetadata: { anthropic: { signature: 'kept-sig' } } }, { type: 'reasoning-end', id: 'r' }, { type: 'text-delta', id: 't', delta: 'ok' }, finish()] },
    ]);
    const result = await Runner.run(new Agent({ name: 'a', model: aiSdkModel(model, { initialRetryDelayMs: 0 }) }), 'go');
    expect(result.transcript[1]).toEqual({
      role: 'assistant',
      content: 'ok',
      reasoning: 'second',
      reasoningParts: [{ text: 'second', providerMetadata: { anthropic: { signature: 'kept-sig' } } }],
      toolCalls: [],
      agent: 'a',
    });
  });

  it('a failure after streaming with no retries left fails the run (no discard announced)', async () => {
    const model = fakeLanguageModel([{ parts: [{ type: 'text-delta', id: 't', delta: 'Hal' }], error: terminated() }]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: aiSdkModel(model, { maxRetries: 0 }) }), 'go'));
    expect(order(events)).toEqual(['run_started', 'turn_started', 'text_delta:Hal', 'run_failed']);
  });

  it('the UI stream closes the voided parts and lists them in data-troupe-discarded before the new attempt', () => {
    const mapper = new UIMessageChunkMapper('r1', { dataEvents: 'none' });
    const base = { runId: 'r1', path: ['a'], agent: 'a' } as const;
    const events: RunEvent[] = [
      { ...base, type: 'run_started', input: 'go' },
      { ...base, type: 'turn_started', turn: 1 },
      { ...base, type: 'reasoning_delta', turn: 1, delta: 'hmm' },
      { ...base, type: 'text_delta', turn: 1, delta: 'Hal' },
      { ...base, type: 'output_discarded', turn: 1, attempt: 1, reason: 'dropped', voided: { text: 'Hal', reasoning: 'hmm', toolCalls: [] } },
      { ...base, type: 'text_delta', turn: 1, delta: 'Hello' },
    ];
    const chunks = events.flatMap((e) => mapper.map(serializeRunEvent(e)));
    expect(chunks).toEqual([
      { type: 'start', messageId: 'r1', messageMetadata: { runId: 'r1', agent: 'a' } },
      { type: 'start-step' },
      { type: 'reasoning-start', id: 'reasoning-1-1' },
      { type: 'reasoning-delta', id: 'reasoning-1-1', delta: 'hmm' },
      { type: 'reasoning-end', id: 'reasoning-1-1' },
      { type: 'text-start', id: 'text-1-2' },
      { type: 'text-delta', id: 'text-1-2', delta: 'Hal' },
      { type: 'text-end', id: 'text-1-2' },
      { type: 'data-troupe-discarded', data: { runId: 'r1', turn: 1, attempt: 1, reason: 'dropped', partIds: ['reasoning-1-1', 'text-1-2'] } },
      { type: 'text-start', id: 'text-1-3' },
      { type: 'text-delta', id: 'text-1-3', delta: 'Hello' },
    ]);
  });
});

describe('tool calls cut off by the output token limit', () => {
  const cutOffText =
    "Tool error: the call to 'echo' was cut off by the output token limit before its arguments were complete; it was not run. Send it again with shorter arguments, or split the work over several calls.";

  it('an input that never ended is passed on at finish reason length and gets the cut-off error result', async () => {
    const model = fakeLanguageModel([
      {
        parts: [
          { type: 'tool-input-start', id: 'c1', toolName: 'echo' },
          { type: 'tool-input-delta', id: 'c1', delta: '{"text":"a long te' },
          finish('length'),
        ],
      },
      { parts: [{ type: 'text-delta', id: 't', delta: 'ok' }, finish()] },
    ]);
    const agent = new Agent({ name: 'a', model: aiSdkModel(model), tools: [echo] });
    const events = await collect(Runner.stream(agent, 'go'));
    const completed = events.filter((e) => e.type === 'tool_call_completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ isError: true, output: cutOffText, call: { id: 'c1', name: 'echo', arguments: '{"text":"a long te' } });
    expect(events.some((e) => e.type === 'tool_call_started')).toBe(false);
    const second = model.calls[1]!.prompt.find((m) => m.role === 'tool')!;
    expect(second.content).toEqual([{ type: 'tool-result', toolCallId: 'c1', toolName: 'echo', output: { type: 'error-text', value: cutOffText } }]);
  });

  it('over the loopback server: a reply cut at finish_reason "length" mid-arguments gets the cut-off result', async () => {
    const cut = toolCallsReply([{ id: 'call_1', name: 'echo', args: '{"text":"abc' }]);
    const chunks = [...(cut as Extract<typeof cut, { kind: 'sse' }>).chunks];
    chunks[chunks.length - 1] = chunk({}, 'length');
    server = await startChatServer([{ kind: 'sse', chunks }, textReply('Sorry.')]);
    const provider = createOpenAICompatible({ baseURL: server.baseURL, name: 'local', apiKey: 'k' });
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: aiSdkModel(provider('test-model')), tools: [echo] }), 'go'));
    expect(events.find((e) => e.type === 'tool_call_completed')).toMatchObject({ isError: true, output: cutOffText });
    expect(server.requests[1]!.body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: cutOffText });
  });

  it('broken arguments with another finish reason keep the JSON error', async () => {
    const model = fakeLanguageModel([
      { parts: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'echo', input: '{"text":' }, finish('tool-calls')] },
      { parts: [{ type: 'text-delta', id: 't', delta: 'ok' }, finish()] },
    ]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: aiSdkModel(model), tools: [echo] }), 'go'));
    const output = (events.find((e) => e.type === 'tool_call_completed') as { output: string }).output;
    expect(output.startsWith("Tool error: arguments for tool 'echo' are not valid JSON:")).toBe(true);
  });
});
