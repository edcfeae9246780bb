import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, ModelError, RunCancelled, Runner, tool, type RunEvent } from '../../src/index.js';
import { aiSdkModel, type AiSdkModelOptions } from '../../src/models/ai-sdk.js';
import { ProviderError } from '../../src/models/provider-error.js';
import { collect, deferred } from '../helpers.js';
import { chunk, errorStatus, startChatServer, textReply, toolCallsReply, usageChunk, type ChatServer, type ReplySource } from './openai-server.js';
import { PROVIDER_PACKAGES, titleFor, type ProviderPackage } from './provider-packages.js';

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});


/** Two tools that each wait until both have started: the run only finishes if they run in parallel. */
function rendezvousTools() {
  const started: string[] = [];
  const both = deferred<void>();
  const arrive = async (name: string) => {
    started.push(name);
    if (started.length === 2) both.resolve();
    await both.promise;
  };
  const add = tool({
    name: 'add',
    description: 'Add two numbers.',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => {
      await arrive('add');
      return a + b;
    },
  });
  const multiply = tool({
    name: 'multiply',
    description: 'Multiply two numbers.',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => {
      await arrive('multiply');
      return a * b;
    },
  });
  return { tools: [add, multiply], started };
}

const failedRun = (events: RunEvent[]) => events.find((e): e is Extract<RunEvent, { type: 'run_failed' }> => e.type === 'run_failed');

describe.each(PROVIDER_PACKAGES)('$label', (pkg: ProviderPackage) => {
  describe.skipIf(pkg.skip !== undefined)(titleFor(pkg, 'OpenAI chat-completions wire protocol (loopback server)'), () => {
    let createOpenAICompatible: Awaited<ReturnType<ProviderPackage['load']>>;
    beforeAll(async () => {
      createOpenAICompatible = await pkg.load();
    });

    async function localModel(replies: ReplySource[], options: AiSdkModelOptions = {}) {
      server = await startChatServer(replies);
      const provider = createOpenAICompatible({ baseURL: server.baseURL, name: 'local', apiKey: 'test-key' });
      const languageModel = provider('test-model');
      // The package really is of the specification under test.
      expect(languageModel.specificationVersion).toBe(pkg.spec);
      return aiSdkModel(languageModel, { initialRetryDelayMs: 1, maxRetryDelayMs: 5, ...options });
    }

    it('runs an agent with parallel tool calls streamed in split, interleaved deltas', async () => {
      const model = await localModel([
        toolCallsReply(
          [
            { id: 'call_add', name: 'add', args: { a: 2, b: 3 } },
            { id: 'call_mul', name: 'multiply', args: { a: 4, b: 3 } },
          ],
          { text: 'Working on it.', pieces: 4, interleave: true, usage: [20, 10] },
        ),
        textReply('2+3 is 5 and 4*3 is 12.', { usage: [40, 8], reasoning: 'Both results are in.' }),
      ]);
      const { tools, started } = rendezvousTools();
      const agent = new Agent({
        name: 'calc',
        instructions: 'You do arithmetic with tools.',
        model,
        tools,
        settings: { temperature: 0, maxTokens: 256, parallelToolCalls: true },
      });
      const handle = Runner.stream(agent, 'What are 2+3 and 4*3?');
      const events = await collect(handle);
      const result = await handle.result();

      expect(result.output).toBe('2+3 is 5 and 4*3 is 12.');
      expect(result.usage).toEqual({ inputTokens: 60, outputTokens: 18, totalTokens: 78, requests: 2 });
      expect(started.sort()).toEqual(['add', 'multiply']);
      const deltas = (type: 'text_delta' | 'reasoning_delta', turn: number) =>
        events.filter((e): e is Extract<RunEvent, { type: typeof type }> => e.type === type && e.turn === turn).map((e) => e.delta).join('');
      expect(deltas('text_delta', 1)).toBe('Working on it.');
      expect(deltas('text_delta', 2)).toBe('2+3 is 5 and 4*3 is 12.');
      expect(deltas('reasoning_delta', 2)).toBe('Both results are in.');
      const completedCalls = events
        .filter((e): e is Extract<RunEvent, { type: 'tool_call_completed' }> => e.type === 'tool_call_completed')
        .map((e) => [e.call.id, e.call.name, e.call.arguments, e.output]);
      expect(completedCalls.sort()).toEqual([
        ['call_add', 'add', '{"a":2,"b":3}', '5'],
        ['call_mul', 'multiply', '{"a":4,"b":3}', '12'],
      ]);
      expect(events.find((e) => e.type === 'message_completed' && e.turn === 2)).toMatchObject({
        message: { role: 'assistant', content: '2+3 is 5 and 4*3 is 12.', reasoning: 'Both results are in.', toolCalls: [] },
      });

      // What went over the wire.
      expect(server!.requests).toHaveLength(2);
      const [first, second] = server!.requests;
      expect(first!.method).toBe('POST');
      expect(first!.path).toBe('/v1/chat/completions');
      expect(first!.headers.authorization).toBe('Bearer test-key');
      expect(first!.body).toEqual({
        model: 'test-model',
        max_tokens: 256,
        temperature: 0,
        parallel_tool_calls: true,
        messages: [
          { role: 'system', content: 'You do arithmetic with tools.' },
          { role: 'user', content: 'What are 2+3 and 4*3?' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'add',
              description: 'Add two numbers.',
              parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
            },
          },
          {
            type: 'function',
            function: {
              name: 'multiply',
              description: 'Multiply two numbers.',
              parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
            },
          },
        ],
        stream: true,
      });
      const toolMessages = second!.body.messages.slice(3);
      expect(second!.body.messages.slice(0, 3)).toEqual([
        { role: 'system', content: 'You do arithmetic with tools.' },
        { role: 'user', content: 'What are 2+3 and 4*3?' },
        {
          role: 'assistant',
          content: 'Working on it.',
          tool_calls: [
            { id: 'call_add', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } },
            { id: 'call_mul', type: 'function', function: { name: 'multiply', arguments: '{"a":4,"b":3}' } },
          ],
        },
      ]);
      expect(toolMessages.sort((x: any, y: any) => x.tool_call_id.localeCompare(y.tool_call_id))).toEqual([
        { role: 'tool', tool_call_id: 'call_add', content: '5' },
        { role: 'tool', tool_call_id: 'call_mul', content: '12' },
      ]);
    });

    it('sends parallel_tool_calls: false when the agent asks for one call per reply', async () => {
      const model = await localModel([textReply('fine')]);
      const { tools } = rendezvousTools();
      await Runner.run(new Agent({ name: 'calc', model, tools, settings: { parallelToolCalls: false } }), 'hi');
      expect(server!.requests[0]!.body.parallel_tool_calls).toBe(false);
    });

    it('retries HTTP 429 and 500 and then completes', async () => {
      const model = await localModel([
        errorStatus(429, 'rate limited', { 'retry-after': '0' }),
        errorStatus(500, 'upstream crashed'),
        textReply('made it', { usage: [5, 2] }),
      ]);
      const result = await Runner.run(new Agent({ name: 'a', model }), 'hi');
      expect(result.output).toBe('made it');
      expect(result.usage).toEqual({ inputTokens: 5, outputTokens: 2, totalTokens: 7, requests: 1 });
      expect(server!.requests).toHaveLength(3);
    });

    it('retries a dropped connection', async () => {
      const model = await localModel([{ kind: 'destroy' }, textReply('back')]);
      expect((await Runner.run(new Agent({ name: 'a', model }), 'hi')).output).toBe('back');
      expect(server!.requests).toHaveLength(2);
    });

    it('fails with a ProviderError after maxRetries + 1 attempts of HTTP 429', async () => {
      const model = await localModel([errorStatus(429, 'rate limited'), errorStatus(429, 'rate limited'), errorStatus(429, 'rate limited'), textReply('too late')]);
      const handle = Runner.stream(new Agent({ name: 'a', model }), 'hi');
      const events = await collect(handle);
      const error = failedRun(events)!.error;
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({
        message: "Model provider 'local.chat' (model 'test-model') failed after 3 attempts: HTTP 429: rate limited",
        retryable: true,
        statusCode: 429,
        attempts: 3,
      });
      await expect(handle.result()).rejects.toBe(error);
      expect(server!.requests).toHaveLength(3);
    });

    it('does not retry HTTP 400', async () => {
      const model = await localModel([errorStatus(400, "Invalid schema for function 'add'")]);
      const error = await Runner.run(new Agent({ name: 'a', model }), 'hi').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).message).toBe("Model provider 'local.chat' (model 'test-model') failed: HTTP 400: Invalid schema for function 'add'");
      expect(server!.requests).toHaveLength(1);
    });

    it('a chunk that is not JSON is a clear, non-retried error', async () => {
      const model = await localModel([{ kind: 'sse', chunks: [chunk({ role: 'assistant', content: '' }), '{not json'] }]);
      const events = await collect(Runner.stream(new Agent({ name: 'a', model }), 'hi'));
      const error = failedRun(events)!.error;
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ message: "Model provider 'local.chat' (model 'test-model') sent a malformed stream chunk: {not json", retryable: false });
      expect(server!.requests).toHaveLength(1);
    });

    it('a chunk of the wrong shape is a clear, non-retried error', async () => {
      const model = await localModel([{ kind: 'sse', chunks: [{ choices: 'nope' }] }]);
      const events = await collect(Runner.stream(new Agent({ name: 'a', model }), 'hi'));
      expect(failedRun(events)!.error).toMatchObject({
        name: 'ProviderError',
        message: `Model provider 'local.chat' (model 'test-model') sent a malformed stream chunk: {"choices":"nope"}`,
      });
      expect(server!.requests).toHaveLength(1);
    });

    it('an error chunk after streamed text fails the run without a retry', async () => {
      const model = await localModel([{ kind: 'sse', chunks: [chunk({ content: 'Partial ' }), { error: { message: 'model overloaded', type: 'server_error' } }] }]);
      const events = await collect(Runner.stream(new Agent({ name: 'a', model }), 'hi'));
      expect(events.filter((e) => e.type === 'text_delta').map((e) => (e as { delta: string }).delta)).toEqual(['Partial ']);
      expect(failedRun(events)!.error).toMatchObject({ name: 'ProviderError', message: "Model provider 'local.chat' (model 'test-model') failed: model overloaded", retryable: false });
      expect(server!.requests).toHaveLength(1);
    });

    it('a stream that ends without a finish reason is an error, not a silent empty reply', async () => {
      const model = await localModel([{ kind: 'sse', chunks: [chunk({ content: 'Cut' })], done: false }]);
      const events = await collect(Runner.stream(new Agent({ name: 'a', model }), 'hi'));
      const error = failedRun(events)!.error;
      expect(error).toBeInstanceOf(ModelError);
      expect(error.message).toBe("Model provider 'local.chat' (model 'test-model') failed: Response stream ended without a finish reason.");
      expect(server!.requests).toHaveLength(1);
    });

    it('usage without a finish reason chunk still counts; usage-only final chunk is read', async () => {
      const model = await localModel([{ kind: 'sse', chunks: [chunk({ content: 'ok' }), chunk({}, 'stop'), usageChunk(9, 1)] }]);
      const result = await Runner.run(new Agent({ name: 'a', model }), 'hi');
      expect(result.usage).toEqual({ inputTokens: 9, outputTokens: 1, totalTokens: 10, requests: 1 });
    });

    it('cancelling a run mid-stream closes the HTTP stream and fails with RunCancelled', async () => {
      const model = await localModel([{ kind: 'sse', chunks: [chunk({ role: 'assistant', content: 'Thinking about' })], hang: true }]);
      const handle = Runner.stream(new Agent({ name: 'a', model }), 'hi');
      const events = await collect(handle, (e) => {
        if (e.type === 'text_delta') handle.cancel('user pressed stop');
      });
      expect(failedRun(events)!.error).toBeInstanceOf(RunCancelled);
      expect(failedRun(events)!.error.message).toBe('Run cancelled: user pressed stop');
      await server!.hungUpOn; // the server saw the client close the response stream
      expect(server!.requests).toHaveLength(1);
    });

    it('a tool call with broken arguments gets an error result and the model sees it as error text', async () => {
      const model = await localModel([toolCallsReply([{ id: 'c1', name: 'add', args: '{"a": 2, "b": ' }]), textReply('sorry')]);
      const { tools } = rendezvousTools();
      const result = await Runner.run(new Agent({ name: 'a', model, tools }), 'hi');
      expect(result.output).toBe('sorry');
      // No instructions, so no system message: [user, assistant, tool].
      const replayed = server!.requests[1]!.body.messages.slice(1);
      expect(replayed[0].tool_calls).toEqual([{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{}' } }]);
      expect(replayed[1]).toMatchObject({ role: 'tool', tool_call_id: 'c1' });
      expect(replayed[1].content).toMatch(/^Tool error: arguments for tool 'add' are not valid JSON: /);
    });
  });
});
