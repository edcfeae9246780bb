import { APICallError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { Agent, ContextOverflowError, ModelError, Runner, isContextOverflow, type RunEvent } from '../../src/index.js';
import { aiSdkModel } from '../../src/entry/ai-sdk.js';
import { ProviderError } from '../../src/models/provider-error.js';
import { fakeLanguageModel, finish, type FakeStep } from '../models/fake-language-model.js';
import { collect } from '../helpers.js';
import { bigTool, compactions } from './fixtures.js';

const overflow = () =>
  new APICallError({
    message: "This model's maximum context length is 4096 tokens. However, your messages resulted in 5210 tokens.",
    url: 'http://x/v1/chat/completions',
    requestBodyValues: {},
    statusCode: 400,
    responseBody: '{"error":{"code":"context_length_exceeded"}}',
    isRetryable: false,
  });

const fetchCall = (n: number): FakeStep => ({ parts: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'fetch_page', input: `{"n":${n}}` }, finish('tool-calls')] });
const reply = (t: string): FakeStep => ({ parts: [{ type: 'text-delta', id: 't', delta: t }, finish()] });
const promptChars = (call: { prompt: unknown }) => JSON.stringify(call.prompt).length;
const PROVIDER_TEXT = "Model provider 'fake.chat' (model 'fake-model') failed: HTTP 400: This model's maximum context length is 4096 tokens. However, your messages resulted in 5210 tokens.";

describe('contextPolicy: a provider context overflow', () => {
  it('compacts harder and retries the request once: overflow → compaction → success', async () => {
    const provider = fakeLanguageModel([fetchCall(1), fetchCall(2), { throws: overflow() }, fetchCall(3), reply('done')]);
    // No maxInputTokens: only the provider's answer triggers compaction.
    const agent = new Agent({ name: 'reader', model: aiSdkModel(provider, { maxRetries: 0 }), tools: [bigTool(5_000)], contextPolicy: { offload: { previewChars: 40 } } });
    const handle = Runner.stream(agent, 'read', { runId: 'r1' });
    const events = await collect(handle);
    expect((await handle.result()).output).toBe('done');
    expect(compactions(events)).toEqual([
      { type: 'context_compacted', runId: 'r1', path: ['reader'], agent: 'reader', turn: 3, reason: 'overflow', stages: ['offload'], offloaded: ['c1', 'c2'], cleared: [], summarized: [], summarizedMessages: 0, tokensBefore: 2676, tokensAfter: 272 },
    ]);
    expect(provider.calls).toHaveLength(5);
    expect(promptChars(provider.calls[3]!)).toBeLessThan(promptChars(provider.calls[2]!) - 9_000);
    // The harder decisions stick: the next request extends the retried one.
    const retried = provider.calls[3]!.prompt;
    expect(provider.calls[4]!.prompt.slice(0, retried.length)).toEqual(retried);
    expect(provider.calls[4]!.prompt).toHaveLength(retried.length + 2);
    expect(events.filter((e) => e.type === 'turn_started')).toHaveLength(4);
  });

  it('fails with ContextOverflowError when the compacted request overflows again', async () => {
    const provider = fakeLanguageModel([fetchCall(1), fetchCall(2), { throws: overflow() }, { throws: overflow() }, reply('never')]);
    const agent = new Agent({ name: 'reader', model: aiSdkModel(provider, { maxRetries: 0 }), tools: [bigTool(5_000)], contextPolicy: {} });
    const events = await collect(Runner.stream(agent, 'read'));
    const failed = events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>;
    expect(failed.type).toBe('run_failed');
    expect(failed.error).toBeInstanceOf(ContextOverflowError);
    expect(failed.error).toBeInstanceOf(ModelError);
    expect((failed.error as ContextOverflowError).code).toBe('CONTEXT_OVERFLOW');
    expect(failed.error.message).toBe(`Model 'fake.chat:fake-model' refused the request as longer than its context window: ${PROVIDER_TEXT}. It still overflowed after contextPolicy compacted harder.`);
    expect((failed.error as Error & { cause: unknown }).cause).toBeInstanceOf(ProviderError);
    expect(provider.calls).toHaveLength(4);
    expect(compactions(events).map((e) => e.reason)).toEqual(['overflow']);
  });

  it('without a contextPolicy, an overflow fails at once with ContextOverflowError saying how to fix it', async () => {
    const provider = fakeLanguageModel([{ throws: overflow() }]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: aiSdkModel(provider, { maxRetries: 0 }) }), 'hi'));
    const failed = events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>;
    expect(failed.error).toBeInstanceOf(ContextOverflowError);
    expect(failed.error.message).toBe(`Model 'fake.chat:fake-model' refused the request as longer than its context window: ${PROVIDER_TEXT}. Set a contextPolicy on the agent or the run to compact what the model is sent.`);
    expect(provider.calls).toHaveLength(1);
  });

  it('does not retry when there is nothing left to compact', async () => {
    const provider = fakeLanguageModel([{ throws: overflow() }, reply('never')]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: aiSdkModel(provider, { maxRetries: 0 }), contextPolicy: {} }), 'hi'));
    const failed = events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>;
    expect(failed.error).toBeInstanceOf(ContextOverflowError);
    expect(failed.error.message).toBe(`Model 'fake.chat:fake-model' refused the request as longer than its context window: ${PROVIDER_TEXT}. contextPolicy found nothing more to compact.`);
    expect(provider.calls).toHaveLength(1);
    expect(compactions(events)).toEqual([]);
  });
});

describe('isContextOverflow', () => {
  const api = (statusCode: number, message: string, responseBody?: string) => new APICallError({ message, url: 'u', requestBodyValues: {}, statusCode, ...(responseBody ? { responseBody } : {}) });
  it('recognises the common provider answers', () => {
    const yes: unknown[] = [
      api(400, 'Bad Request', '{"error":{"message":"x","type":"invalid_request_error","code":"context_length_exceeded"}}'),
      api(400, 'prompt is too long: 213456 tokens > 200000 maximum'),
      api(400, 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).'),
      api(400, 'Input is too long for requested model.'),
      api(400, 'Prompt contains 40000 tokens, too large for model with 32768 maximum context length'),
      api(400, 'the request exceeds the available context size, try increasing it'),
      api(413, 'Request Entity Too Large'),
      { code: 'context_length_exceeded', message: 'x' },
      new Error('wrapped', { cause: new Error("This model's maximum context length is 8192 tokens") }),
      'Please reduce the length of the messages or completion.',
    ];
    const no: unknown[] = [api(429, 'Rate limit reached for tokens per minute (TPM): Limit 30000, Requested 50000. Please reduce the length of the messages.'), api(500, 'overloaded'), new Error('fetch failed'), undefined, 42];
    expect(yes.map(isContextOverflow)).toEqual(yes.map(() => true));
    expect(no.map(isContextOverflow)).toEqual(no.map(() => false));
  });
});
