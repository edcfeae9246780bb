import { APICallError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, ModelError, Runner, UserError, tool, type Message } from '../../src/index.js';
import type { LanguageModelV3, LanguageModelV4 } from '@ai-sdk/provider';
import type { createOpenAICompatible as createV2 } from '@ai-sdk/openai-compatible';
import type { createOpenAICompatible as createV3 } from 'openai-compatible-3';
import { aiSdkModel, retryDelayMs, type AiSdkLanguageModel } from '../../src/models/ai-sdk.js';
import { toCallOptions, toPrompt } from '../../src/models/ai-sdk-request.js';
import type { ModelRequest, ModelStreamPart } from '../../src/models/model.js';
import { ProviderError, retryAfter, toProviderError } from '../../src/models/provider-error.js';
import { fakeLanguageModel, finish, usage } from './fake-language-model.js';

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { agent: 'a', system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }], tools: [], settings: {}, signal: new AbortController().signal, ...overrides };
}

async function drain(stream: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

async function failure(stream: AsyncIterable<ModelStreamPart>): Promise<{ error: unknown; parts: ModelStreamPart[] }> {
  const parts: ModelStreamPart[] = [];
  try {
    for await (const part of stream) parts.push(part);
  } catch (error) {
    return { error, parts };
  }
  throw new Error('expected the stream to fail');
}

const http = (statusCode: number, message = 'boom', responseHeaders?: Record<string, string>) =>
  new APICallError({ message, url: 'http://x/v1/chat/completions', requestBodyValues: {}, statusCode, responseHeaders });

const fast = { initialRetryDelayMs: 0 };

/** Compile-time checks: what aiSdkModel takes fits both specifications and both provider majors. */
type Takes<T extends AiSdkLanguageModel> = T;
export type AcceptedModels = [
  Takes<LanguageModelV3>,
  Takes<LanguageModelV4>,
  Takes<ReturnType<ReturnType<typeof createV2>['chatModel']>>,
  Takes<ReturnType<ReturnType<typeof createV3>['chatModel']>>,
];

describe('aiSdkModel: stream translation', () => {
  it('streams reasoning and text deltas, then usage and the unified finish reason', async () => {
    const model = fakeLanguageModel([
      {
        parts: [
          { type: 'stream-start', warnings: [] },
          { type: 'response-metadata', id: 'r1' },
          { type: 'reasoning-start', id: 'r' },
          { type: 'reasoning-delta', id: 'r', delta: 'thinking' },
          { type: 'reasoning-end', id: 'r' },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'Hello' },
          { type: 'text-delta', id: 't', delta: '' },
          { type: 'text-delta', id: 't', delta: ' world' },
          { type: 'text-end', id: 't' },
          finish('stop', 12, 7),
        ],
      },
    ]);
    expect(await drain(aiSdkModel(model).stream(request()))).toEqual([
      { type: 'reasoning_delta', delta: 'thinking' },
      { type: 'reasoning_part', part: { text: 'thinking' } },
      { type: 'text_delta', delta: 'Hello' },
      { type: 'text_delta', delta: ' world' },
      { type: 'finish', usage: { inputTokens: 12, outputTokens: 7, totalTokens: 19 }, finishReason: 'stop' },
    ]);
  });

  it('leaves usage empty when the provider reports none', async () => {
    const model = fakeLanguageModel([{ parts: [{ type: 'finish', usage: usage(undefined, undefined), finishReason: { unified: 'stop', raw: 'stop' } }] }]);
    expect(await drain(aiSdkModel(model).stream(request()))).toEqual([{ type: 'finish', usage: {}, finishReason: 'stop' }]);
  });

  it('emits one tool_call per finished call: tool-call parts, tool inputs without a tool-call, no duplicates', async () => {
    const model = fakeLanguageModel([
      {
        parts: [
          // Streamed input followed by the complete call: one tool_call, from the tool-call part.
          { type: 'tool-input-start', id: 'c1', toolName: 'add' },
          { type: 'tool-input-delta', id: 'c1', delta: '{"a":' },
          { type: 'tool-input-delta', id: 'c1', delta: '2,"b":3}' },
          { type: 'tool-input-end', id: 'c1' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: '{"a":2,"b":3}' },
          // Only a complete call.
          { type: 'tool-call', toolCallId: 'c2', toolName: 'mul', input: '{"a":4,"b":3}' },
          // A repeated tool-call part for an id already emitted.
          { type: 'tool-call', toolCallId: 'c2', toolName: 'mul', input: '{"a":4,"b":3}' },
          // Only streamed input: emitted before finish.
          { type: 'tool-input-start', id: 'c3', toolName: 'echo' },
          { type: 'tool-input-delta', id: 'c3', delta: '{"text":"x"}' },
          { type: 'tool-input-end', id: 'c3' },
          // Cut off: never ended, no call.
          { type: 'tool-input-start', id: 'c4', toolName: 'echo' },
          { type: 'tool-input-delta', id: 'c4', delta: '{"te' },
          // Provider-executed tools already ran on the provider's side.
          { type: 'tool-call', toolCallId: 'p1', toolName: 'web_search', input: '{}', providerExecuted: true },
          { type: 'tool-result', toolCallId: 'p1', toolName: 'web_search', result: { hits: 1 } },
          finish('tool-calls'),
        ],
      },
    ]);
    expect(await drain(aiSdkModel(model).stream(request()))).toEqual([
      { type: 'tool_call', call: { id: 'c1', name: 'add', arguments: '{"a":2,"b":3}' } },
      { type: 'tool_call', call: { id: 'c2', name: 'mul', arguments: '{"a":4,"b":3}' } },
      { type: 'tool_call', call: { id: 'c3', name: 'echo', arguments: '{"text":"x"}' } },
      { type: 'finish', usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, finishReason: 'tool-calls' },
    ]);
  });

  it('flushes ended tool inputs when a stream ends without a finish part', async () => {
    const model = fakeLanguageModel([
      { parts: [{ type: 'tool-input-start', id: 'c1', toolName: 'add' }, { type: 'tool-input-delta', id: 'c1', delta: '{}' }, { type: 'tool-input-end', id: 'c1' }] },
    ]);
    expect(await drain(aiSdkModel(model).stream(request()))).toEqual([{ type: 'tool_call', call: { id: 'c1', name: 'add', arguments: '{}' } }]);
  });

  it('rejects a model that is neither a LanguageModelV3 nor a LanguageModelV4, naming the versions it takes', () => {
    const accepted = "aiSdkModel takes an AI SDK language model of specificationVersion 'v3' (AI SDK 6 providers, @ai-sdk/provider 3.x) or 'v4' (AI SDK 7 providers, @ai-sdk/provider 4.x)";
    const v2 = { ...fakeLanguageModel([]), specificationVersion: 'v2' } as never;
    expect(() => aiSdkModel(v2)).toThrow(UserError);
    expect(() => aiSdkModel(v2)).toThrow(`${accepted}, got 'v2'. Use a provider package built for AI SDK 6 or 7.`);
    expect(() => aiSdkModel({ ...fakeLanguageModel([]), specificationVersion: 'v5' } as never)).toThrow(`${accepted}, got 'v5'. Use a provider package built for AI SDK 6 or 7.`);
    expect(() => aiSdkModel({ provider: 'p', modelId: 'm' } as never)).toThrow(`${accepted}, got no specificationVersion. Use a provider package built for AI SDK 6 or 7.`);
    expect(aiSdkModel({ ...fakeLanguageModel([]), specificationVersion: 'v4' } as never).name).toBe('fake.chat:fake-model');
    expect(() => aiSdkModel(fakeLanguageModel([]), { maxRetries: -1 })).toThrow('aiSdkModel: maxRetries must be a non-negative integer, got -1.');
  });

  it('is named <provider>:<modelId> unless a name is given', () => {
    expect(aiSdkModel(fakeLanguageModel([], { provider: 'ollama.chat', modelId: 'qwen3' })).name).toBe('ollama.chat:qwen3');
    expect(aiSdkModel(fakeLanguageModel([]), { name: 'mine' }).name).toBe('mine');
  });
});

describe('aiSdkModel: request translation', () => {
  it('maps the transcript: system, user, assistant reasoning/text/calls, grouped tool results with error-text', () => {
    const messages: Message[] = [
      { role: 'user', content: 'add and multiply' },
      {
        role: 'assistant',
        agent: 'calc',
        content: 'On it.',
        reasoning: 'two calls',
        toolCalls: [
          { id: 'c1', name: 'add', arguments: '{"a":2,"b":3}' },
          { id: 'c2', name: 'mul', arguments: '{"a":2,' },
          { id: 'c3', name: 'noop', arguments: '' },
        ],
      },
      { role: 'tool', callId: 'c2', name: 'mul', content: 'Tool error: arguments are not valid JSON', isError: true },
      { role: 'tool', callId: 'c1', name: 'add', content: '5', isError: false },
      { role: 'tool', callId: 'c3', name: 'noop', content: '', isError: false },
      { role: 'user', content: 'a mailbox note' },
      { role: 'assistant', agent: 'calc', content: '', toolCalls: [] },
    ];
    expect(toPrompt('You add.', messages)).toEqual([
      { role: 'system', content: 'You add.' },
      { role: 'user', content: [{ type: 'text', text: 'add and multiply' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'two calls' },
          { type: 'text', text: 'On it.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: { a: 2, b: 3 } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'mul', input: {} },
          { type: 'tool-call', toolCallId: 'c3', toolName: 'noop', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c2', toolName: 'mul', output: { type: 'error-text', value: 'Tool error: arguments are not valid JSON' } },
          { type: 'tool-result', toolCallId: 'c1', toolName: 'add', output: { type: 'text', value: '5' } },
          { type: 'tool-result', toolCallId: 'c3', toolName: 'noop', output: { type: 'text', value: '' } },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'a mailbox note' }] },
      { role: 'assistant', content: [{ type: 'text', text: '' }] },
    ]);
    expect(toPrompt('', [{ role: 'user', content: 'x' }])).toEqual([{ role: 'user', content: [{ type: 'text', text: 'x' }] }]);
  });

  it('passes an outputType schema to the provider as the v3 responseFormat (and says it supports it)', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const options = toCallOptions(request({ responseFormat: { type: 'json', schema, name: 'output' } }), fakeLanguageModel([]));
    expect(options.responseFormat).toEqual({ type: 'json', schema, name: 'output' });
    expect(toCallOptions(request(), fakeLanguageModel([])).responseFormat).toBeUndefined();
    expect(aiSdkModel(fakeLanguageModel([])).supportsResponseFormat).toBe(true);
  });

  it('maps tools and settings onto call options', () => {
    const signal = new AbortController().signal;
    const options = toCallOptions(
      request({
        signal,
        tools: [
          { name: 'add', description: 'Add.', parameters: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] }, strict: false },
          { name: 'get', description: 'Get.', parameters: { type: 'object', properties: {}, required: [], additionalProperties: false }, strict: true },
        ],
        settings: { temperature: 0.2, maxTokens: 300, providerOptions: { fake: { user: 'u1' } } },
      }),
      fakeLanguageModel([]),
      { headers: { 'x-team': 'a' } },
    );
    expect(options).toEqual({
      prompt: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      ],
      abortSignal: signal,
      tools: [
        { type: 'function', name: 'add', description: 'Add.', inputSchema: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] } },
        { type: 'function', name: 'get', description: 'Get.', inputSchema: { type: 'object', properties: {}, required: [], additionalProperties: false }, strict: true },
      ],
      temperature: 0.2,
      maxOutputTokens: 300,
      providerOptions: { fake: { user: 'u1' } },
      headers: { 'x-team': 'a' },
    });
    expect(options.abortSignal).toBe(signal);
  });

  it('maps parallelToolCalls per provider family and lets settings.providerOptions win', () => {
    const tools = [{ name: 't', description: 'T.', parameters: { type: 'object', properties: {} }, strict: false }];
    const opts = (provider: string, settings: ModelRequest['settings'], extra?: object, adapter = {}) =>
      toCallOptions(request({ tools, settings }), fakeLanguageModel([], { provider, extra }), adapter).providerOptions;
    expect(opts('openai.chat', { parallelToolCalls: false })).toEqual({ openai: { parallelToolCalls: false } });
    expect(opts('anthropic.messages', { parallelToolCalls: false })).toEqual({ anthropic: { disableParallelToolUse: true } });
    // The openai-compatible family passes unknown provider options into the request body.
    expect(opts('ollama.chat', { parallelToolCalls: true }, { providerOptionsName: 'ollama' })).toEqual({ ollama: { parallel_tool_calls: true } });
    // Unknown providers have no known switch.
    expect(opts('mystery.chat', { parallelToolCalls: false })).toBeUndefined();
    // Without tools the switch is not sent at all.
    expect(toCallOptions(request({ settings: { parallelToolCalls: false } }), fakeLanguageModel([], { provider: 'openai.chat' })).providerOptions).toBeUndefined();
    // Adapter defaults < parallel mapping < settings.providerOptions, key by key.
    expect(
      opts(
        'openai.chat',
        { parallelToolCalls: false, providerOptions: { openai: { parallelToolCalls: true, user: 'me' } } },
        undefined,
        { providerOptions: { openai: { store: false, user: 'default' } } },
      ),
    ).toEqual({ openai: { store: false, user: 'me', parallelToolCalls: true } });
    // A custom mapper.
    expect(opts('mystery.chat', { parallelToolCalls: false }, undefined, { parallelToolCalls: (on: boolean) => ({ mystery: { serial: !on } }) })).toEqual({
      mystery: { serial: true },
    });
  });

  it('passes request.signal to the provider', async () => {
    const model = fakeLanguageModel([{ parts: [finish()] }]);
    const controller = new AbortController();
    await drain(aiSdkModel(model).stream(request({ signal: controller.signal })));
    expect(model.calls[0]!.abortSignal).toBe(controller.signal);
  });
});

describe('aiSdkModel: errors and retries', () => {
  it('retries retryable failures before any output, then streams the reply', async () => {
    const model = fakeLanguageModel([{ throws: http(429) }, { throws: http(503) }, { parts: [{ type: 'text-delta', id: 't', delta: 'ok' }, finish()] }]);
    const parts = await drain(aiSdkModel(model, fast).stream(request()));
    expect(parts.map((p) => p.type)).toEqual(['text_delta', 'finish']);
    expect(model.calls).toHaveLength(3);
  });

  it('gives up after maxRetries with a ProviderError counting the attempts', async () => {
    const model = fakeLanguageModel([{ throws: http(500, 'upstream down') }, { throws: http(500, 'upstream down') }, { throws: http(500, 'still down') }]);
    const { error } = await failure(aiSdkModel(model, fast).stream(request()));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({
      message: "Model provider 'fake.chat' (model 'fake-model') failed after 3 attempts: HTTP 500: still down",
      code: 'PROVIDER_ERROR',
      retryable: true,
      statusCode: 500,
      attempts: 3,
      provider: 'fake.chat',
      modelId: 'fake-model',
    });
    expect(model.calls).toHaveLength(3);
  });

  it('maxRetries: 0 makes one attempt', async () => {
    const model = fakeLanguageModel([{ throws: http(429, 'slow down') }]);
    const { error } = await failure(aiSdkModel(model, { maxRetries: 0 }).stream(request()));
    expect((error as ProviderError).message).toBe("Model provider 'fake.chat' (model 'fake-model') failed: HTTP 429: slow down");
    expect(model.calls).toHaveLength(1);
  });

  it('does not retry client errors', async () => {
    const model = fakeLanguageModel([{ throws: http(400, 'bad tool schema') }]);
    const { error } = await failure(aiSdkModel(model, fast).stream(request()));
    expect(error).toMatchObject({ retryable: false, statusCode: 400, attempts: 1 });
    expect(model.calls).toHaveLength(1);
  });

  it('a failure after streamed output with no retries left is the ProviderError, with no discard part', async () => {
    const terminated = new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    const model = fakeLanguageModel([{ parts: [{ type: 'text-delta', id: 't', delta: 'Hal' }], error: terminated }, { parts: [finish()] }]);
    const { error, parts } = await failure(aiSdkModel(model, { ...fast, maxRetries: 0 }).stream(request()));
    expect(parts).toEqual([{ type: 'text_delta', delta: 'Hal' }]);
    expect(error).toMatchObject({ message: "Model provider 'fake.chat' (model 'fake-model') failed: terminated", retryable: true, attempts: 1 });
    expect(model.calls).toHaveLength(1);
  });

  it('retries a retryable stream error that arrives before any output', async () => {
    const model = fakeLanguageModel([
      { parts: [{ type: 'stream-start', warnings: [] }, { type: 'error', error: http(503, 'overloaded') }] },
      { parts: [{ type: 'text-delta', id: 't', delta: 'ok' }, finish()] },
    ]);
    expect((await drain(aiSdkModel(model, fast).stream(request()))).map((p) => p.type)).toEqual(['text_delta', 'finish']);
    expect(model.calls).toHaveLength(2);
  });

  it('an error part with a plain object is a non-retryable ProviderError with its message', async () => {
    const model = fakeLanguageModel([{ parts: [{ type: 'error', error: { message: 'context length exceeded', code: 'context_length' } }] }]);
    const { error } = await failure(aiSdkModel(model, fast).stream(request()));
    expect(error).toMatchObject({ message: "Model provider 'fake.chat' (model 'fake-model') failed: context length exceeded", retryable: false });
    expect(model.calls).toHaveLength(1);
  });

  it('stops the provider stream when the consumer stops early', async () => {
    const model = fakeLanguageModel([{ parts: [{ type: 'text-delta', id: 't', delta: 'a' }, { type: 'text-delta', id: 't', delta: 'b' }, finish()] }]);
    for await (const _ of aiSdkModel(model).stream(request())) break;
    expect(model.cancelled).toBe(1);
  });

  it('an abort during the backoff ends the call with the abort reason, without another attempt', async () => {
    const controller = new AbortController();
    const model = fakeLanguageModel([{ throws: http(503) }, { parts: [finish()] }]);
    const stream = aiSdkModel(model, { initialRetryDelayMs: 60_000, random: () => 0 }).stream(request({ signal: controller.signal }));
    const iterator = stream[Symbol.asyncIterator]();
    const next = iterator.next();
    await new Promise((r) => setTimeout(r, 0));
    const reason = new Error('stop now');
    controller.abort(reason);
    await expect(next).rejects.toBe(reason);
    expect(model.calls).toHaveLength(1);
  });

  it('an aborted request rethrows the abort reason rather than a ProviderError', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by user');
    controller.abort(reason);
    const abortError = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    const model = fakeLanguageModel([{ throws: abortError }]);
    const { error } = await failure(aiSdkModel(model).stream(request({ signal: controller.signal })));
    expect(error).toBe(reason);
  });

  it('backoff: equal jitter, exponential, capped; a reasonable retry-after wins', () => {
    const at = (random: number) => ({ initialRetryDelayMs: 500, maxRetryDelayMs: 3000, random: () => random });
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, at(0)))).toEqual([250, 500, 1000, 1500, 1500]);
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, at(0.5)))).toEqual([375, 750, 1500, 2250]);
    expect(retryDelayMs(1, at(0), 2000)).toBe(2000);
    expect(retryDelayMs(1, at(0), 0)).toBe(0);
    expect(retryDelayMs(1, { ...at(0), maxRetryAfterMs: 1000 }, 2000)).toBe(250);
    // Defaults: 500 ms initial, 10 s cap.
    expect(retryDelayMs(10, { random: () => 0 })).toBe(5000);
  });

  it('reads retry-after-ms, retry-after seconds and HTTP dates', () => {
    expect(retryAfter({ 'Retry-After-Ms': '120' })).toBe(120);
    expect(retryAfter({ 'retry-after': '2' })).toBe(2000);
    expect(retryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:28:05 GMT' }, Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(5000);
    expect(retryAfter({ 'retry-after': 'soon' })).toBeUndefined();
    expect(retryAfter(undefined)).toBeUndefined();
  });

  it('classifies network failures as retryable', () => {
    const model = { provider: 'p', modelId: 'm' };
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(toProviderError(refused, model, 1)).toMatchObject({ retryable: true, message: "Model provider 'p' (model 'm') failed: connect ECONNREFUSED 127.0.0.1:1" });
    expect(toProviderError(new TypeError('fetch failed', { cause: refused }), model, 1).retryable).toBe(true);
    expect(toProviderError(new Error('nope'), model, 2)).toMatchObject({ retryable: false, message: "Model provider 'p' (model 'm') failed after 2 attempts: nope" });
    expect(toProviderError(http(409), model, 1).retryable).toBe(true);
    expect(toProviderError(http(401, 'bad key'), model, 1)).toMatchObject({ retryable: false, statusCode: 401 });
  });
});

describe('aiSdkModel in a run', () => {
  it('runs an agent through tool calls and reports usage', async () => {
    const model = fakeLanguageModel([
      {
        parts: [
          { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: '{"a":2,"b":3}' },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'add', input: '{"a":1,"b":1}' },
          finish('tool-calls', 20, 10),
        ],
      },
      { parts: [{ type: 'text-delta', id: 't', delta: '5 and 2' }, finish('stop', 30, 4)] },
    ]);
    const add = tool({ name: 'add', description: 'Add.', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });
    const result = await Runner.run(new Agent({ name: 'calc', instructions: 'Add.', model: aiSdkModel(model), tools: [add] }), '2+3, 1+1?');
    expect(result.output).toBe('5 and 2');
    expect(result.usage).toEqual({ inputTokens: 50, outputTokens: 14, totalTokens: 64, requests: 2 });
    expect(model.calls[1]!.prompt.slice(-1)).toEqual([
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'add', output: { type: 'text', value: '5' } },
          { type: 'tool-result', toolCallId: 'c2', toolName: 'add', output: { type: 'text', value: '2' } },
        ],
      },
    ]);
  });
});

describe('aiSdkModel: a LanguageModelV4 (AI SDK 7) gets v4 call options', () => {
  it('file data is tagged and tool-result media become file parts; the rest is the v3 shape', async () => {
    const v4 = { ...fakeLanguageModel([{ parts: [finish('stop')] }], { provider: 'anthropic.messages' }), specificationVersion: 'v4' } as unknown as ReturnType<typeof fakeLanguageModel>;
    const messages: Message[] = [
      { role: 'user', content: 'see [image] and [file report.pdf]', parts: [{ type: 'text', text: 'see' }, { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' }, { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'report.pdf' }] },
      { role: 'assistant', agent: 'a', content: '', reasoningParts: [{ text: 'look', providerMetadata: { anthropic: { signature: 'sig' } } }], toolCalls: [{ id: 'c1', name: 'chart', arguments: '{}' }] },
      { role: 'tool', callId: 'c1', name: 'chart', content: 'chart [image]', isError: false, parts: [{ type: 'text', text: 'chart' }, { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' }, { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'a.pdf' }] },
    ];
    await drain(aiSdkModel(v4).stream(request({ messages, system: '' })));
    expect(v4.calls[0]!.prompt).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'see' },
          { type: 'file', data: { type: 'data', data: 'iVBORw0KGgo=' }, mediaType: 'image/png' },
          { type: 'file', data: { type: 'data', data: 'JVBERi0=' }, mediaType: 'application/pdf', filename: 'report.pdf' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'look', providerOptions: { anthropic: { signature: 'sig' } } },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'chart', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'chart',
            output: {
              type: 'content',
              value: [
                { type: 'text', text: 'chart' },
                { type: 'file', data: { type: 'data', data: 'iVBORw0KGgo=' }, mediaType: 'image/png' },
                { type: 'file', data: { type: 'data', data: 'JVBERi0=' }, mediaType: 'application/pdf', filename: 'a.pdf' },
              ],
            },
          },
        ],
      },
    ]);
    // The same request to a v3 model keeps v3's untagged data and image-data / file-data parts.
    const v3 = fakeLanguageModel([{ parts: [finish('stop')] }], { provider: 'anthropic.messages' });
    await drain(aiSdkModel(v3).stream(request({ messages, system: '' })));
    expect((v3.calls[0]!.prompt[0]!.content as unknown[])[1]).toEqual({ type: 'file', data: 'iVBORw0KGgo=', mediaType: 'image/png' });
    expect((v3.calls[0]!.prompt[2]!.content as Array<{ output: { value: unknown[] } }>)[0]!.output.value.slice(1)).toEqual([
      { type: 'image-data', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
      { type: 'file-data', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'a.pdf' },
    ]);
  });
});
