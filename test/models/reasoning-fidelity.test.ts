import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, tool, type AssistantMessage, type CheckpointEntry, type Message } from '../../src/index.js';
import { aiSdkModel } from '../../src/models/ai-sdk.js';
import type { ModelStreamPart } from '../../src/models/model.js';
import { fakeLanguageModel, finish } from './fake-language-model.js';
import { CHECKPOINT_SCHEMA_VERSION, decodeEntry } from '../../src/store/format.js';
import { collect, deferred, flush } from '../helpers.js';
import { REDACTED, SIGNATURE, THINKING, anthropicStyleModel } from './anthropic-style-model.js';
import { chunk, startChatServer, textReply, usageChunk, type ChatServer } from './openai-server.js';
import { PROVIDER_PACKAGES, titleFor } from './provider-packages.js';

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const weather = tool({ name: 'weather', description: 'Weather in a city.', parameters: z.object({ city: z.string() }), execute: ({ city }) => `18 °C in ${city}` });

const signedReply = {
  role: 'assistant',
  content: '',
  reasoning: THINKING,
  reasoningParts: [{ text: THINKING, providerMetadata: { anthropic: { signature: SIGNATURE } } }, { text: '', providerMetadata: { anthropic: { redactedData: REDACTED } } }],
  toolCalls: [{ id: 'toolu_1', name: 'weather', arguments: '{"city":"Zürich"}' }],
  agent: 'forecaster',
};

describe('reasoning fidelity: provider metadata goes back to the provider', () => {
  it.each(['v3', 'v4'] as const)('an Anthropic-style provider (%s) that requires the signed and redacted thinking of the last turn completes a tool loop', async (spec) => {
    const provider = anthropicStyleModel(spec);
    const agent = new Agent({ name: 'forecaster', model: aiSdkModel(provider), tools: [weather] });
    const result = await Runner.run(agent, 'Weather in Zürich?');
    expect(result.output).toBe('It is 18 °C in Zürich.');
    expect(result.transcript[1]).toEqual(signedReply);
    expect(provider.prompts).toHaveLength(2);
    const sentBack = provider.prompts[1]!.find((m) => m.role === 'assistant')!;
    expect(sentBack.content).toEqual([
      { type: 'reasoning', text: THINKING, providerOptions: { anthropic: { signature: SIGNATURE } } },
      { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: REDACTED } } },
      { type: 'tool-call', toolCallId: 'toolu_1', toolName: 'weather', input: { city: 'Zürich' } },
    ]);
  });

  it('the redacted block stays opaque: no reasoning delta or text of it reaches the events', async () => {
    const events = await collect(Runner.stream(new Agent({ name: 'forecaster', model: aiSdkModel(anthropicStyleModel()), tools: [weather] }), 'Weather in Zürich?'));
    const reasoning = events.filter((e) => e.type === 'reasoning_delta').map((e) => (e as { delta: string }).delta);
    expect(reasoning.join('')).toBe(THINKING);
    expect(JSON.stringify(reasoning)).not.toContain(REDACTED);
  });

  it('the same provider fails when the signature is not sent back (the fake can fail)', async () => {
    const input: Message[] = [
      { role: 'user', content: 'Weather in Zürich?' },
      { role: 'assistant', content: '', reasoning: THINKING, toolCalls: [{ id: 'toolu_1', name: 'weather', arguments: '{"city":"Zürich"}' }], agent: 'forecaster' },
      { role: 'tool', callId: 'toolu_1', name: 'weather', content: '18 °C in Zürich', isError: false },
    ];
    const events = await collect(Runner.stream(new Agent({ name: 'forecaster', model: aiSdkModel(anthropicStyleModel()), tools: [weather] }), input));
    expect(events.at(-1)).toMatchObject({
      type: 'run_failed',
      error: { name: 'ProviderError', statusCode: 400, message: "Model provider 'anthropic.messages' (model 'claude-test') failed: HTTP 400: messages.1.content.0: `thinking` block is missing or its `signature` is invalid" },
    });
  });

  it('the metadata survives the checkpoint log: a run resumed from stored JSON entries sends the signature back', async () => {
    const hang = deferred<string>();
    const stuck = tool({ name: 'weather', description: 'Weather in a city.', parameters: z.object({ city: z.string() }), execute: () => hang.promise });
    const store = new MemoryCheckpointStore();
    const first = Runner.stream(new Agent({ name: 'forecaster', model: aiSdkModel(anthropicStyleModel()), tools: [stuck] }), 'Weather in Zürich?', { checkpoint: { store, runId: 'think-1' } });
    const reading = collect(first);
    await flush();
    const saved = store.load('think-1')!;
    expect(saved.entries.map((e) => e.kind)).toEqual(['input', 'reply']);
    // What another process reads: the entries as stored JSON, decoded and checked.
    const decoded = saved.entries.map((entry, i) => decodeEntry(JSON.stringify(entry), `entry ${i + 1}`, CHECKPOINT_SCHEMA_VERSION));
    expect((decoded[1] as Extract<CheckpointEntry, { kind: 'reply' }>).message).toEqual(signedReply);
    const crashed = new MemoryCheckpointStore();
    crashed.append('think-1', decoded, saved.head);
    first.cancel('test cleanup');
    await reading;

    const provider = anthropicStyleModel();
    const resumed = await Runner.run(new Agent({ name: 'forecaster', model: aiSdkModel(provider), tools: [weather] }), 'Weather in Zürich?', { checkpoint: { store: crashed, runId: 'think-1' } });
    expect(resumed.output).toBe('It is 18 °C in Zürich.');
    expect(provider.prompts).toHaveLength(1);
  });

  it('run input may carry reasoning parts (e.g. a stored conversation): they are checked and sent back', async () => {
    const provider = anthropicStyleModel();
    const input = [
      { role: 'user', content: 'Weather in Zürich?' },
      signedReply,
      { role: 'tool', callId: 'toolu_1', name: 'weather', content: '18 °C in Zürich', isError: false },
    ] as Message[];
    expect((await Runner.run(new Agent({ name: 'forecaster', model: aiSdkModel(provider), tools: [weather] }), input)).output).toBe('It is 18 °C in Zürich.');
    const bad = [input[0], { ...signedReply, reasoningParts: [{ text: 1 }] }, input[2]] as unknown as Message[];
    const events = await collect(Runner.stream(new Agent({ name: 'forecaster', model: aiSdkModel(provider), tools: [weather] }), bad));
    expect(events.at(-1)).toMatchObject({ type: 'run_failed', error: { name: 'UserError', message: "Run input message #2 (assistant): reasoningParts part 1 needs a string 'text'." } });
  });

  it('metadata from the start, deltas and end of a block is merged per provider; blocks never ended are flushed at finish', async () => {
    const provider = fakeLanguageModel([
      {
        parts: [
          { type: 'reasoning-start', id: 'a', providerMetadata: { openai: { itemId: 'rs_1' } } },
          { type: 'reasoning-delta', id: 'a', delta: 'Plan.' },
          { type: 'reasoning-end', id: 'a', providerMetadata: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'gAAAA' } } },
          { type: 'reasoning-start', id: 'b' },
          { type: 'reasoning-delta', id: 'b', delta: 'More.' },
          finish(),
        ],
      },
    ]);
    const parts: ModelStreamPart[] = [];
    for await (const part of aiSdkModel(provider).stream({ agent: 'a', system: '', messages: [{ role: 'user', content: 'hi' }], tools: [], settings: {}, signal: new AbortController().signal })) parts.push(part);
    expect(parts.filter((p) => p.type === 'reasoning_part')).toEqual([
      { type: 'reasoning_part', part: { text: 'Plan.', providerMetadata: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'gAAAA' } } } },
      { type: 'reasoning_part', part: { text: 'More.' } },
    ]);
    expect(parts.at(-1)).toMatchObject({ type: 'finish' });
  });

  it('a reply whose blocks carry no metadata keeps only its reasoning text; an explicit contentParts setting wins over the default', async () => {
    const provider = fakeLanguageModel([{ parts: [{ type: 'reasoning-start', id: 'r' }, { type: 'reasoning-delta', id: 'r', delta: 'Hm.' }, { type: 'reasoning-end', id: 'r' }, { type: 'text-delta', id: 't', delta: 'Hi' }, finish()] }]);
    const result = await Runner.run(new Agent({ name: 'a', model: aiSdkModel(provider) }), 'hi');
    expect(result.transcript[1]).toEqual({ role: 'assistant', content: 'Hi', reasoning: 'Hm.', toolCalls: [], agent: 'a' });
    expect(aiSdkModel(provider, { contentParts: { toolResults: true } }).contentParts).toEqual({ toolResults: true, userInput: true });
    expect(aiSdkModel(fakeLanguageModel([], { provider: 'anthropic.messages' }), { contentParts: { userInput: false } }).contentParts).toEqual({ toolResults: true, userInput: false });
  });

  describe.each(PROVIDER_PACKAGES)('$label', (pkg) => {
    it.skipIf(pkg.skip !== undefined)(titleFor(pkg, 'through the loopback OpenAI-compatible server: reasoning text and a Gemini thought signature round-trip'), async () => {
      const createOpenAICompatible = await pkg.load();
      server = await startChatServer([
        {
          kind: 'sse',
          chunks: [
            chunk({ role: 'assistant', content: null }),
            chunk({ reasoning_content: 'Need the weather. ' }),
            chunk({ reasoning_content: 'Calling the tool.' }),
            chunk({ tool_calls: [{ index: 0, id: 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Zürich"}' }, extra_content: { google: { thought_signature: 'ts-Cp8BAdHtim9' } } }] }),
            chunk({}, 'tool_calls'),
            usageChunk(20, 8),
          ],
        },
        textReply('18 °C.'),
      ]);
      // Gemini's OpenAI-compatible endpoint: the provider is named 'google', as the signature's key.
      const provider = createOpenAICompatible({ baseURL: server.baseURL, name: 'google', apiKey: 'k' });
      expect(provider('gemini-test').specificationVersion).toBe(pkg.spec);
      const result = await Runner.run(new Agent({ name: 'forecaster', model: aiSdkModel(provider('gemini-test')), tools: [weather] }), 'Weather in Zürich?');
      expect(result.output).toBe('18 °C.');
      const reply = result.transcript[1] as AssistantMessage;
      expect(reply.toolCalls).toEqual([{ id: 'call_w', name: 'weather', arguments: '{"city":"Zürich"}', providerMetadata: { google: { thoughtSignature: 'ts-Cp8BAdHtim9' } } }]);
      expect(reply.reasoning).toBe('Need the weather. Calling the tool.');
      const assistant = server.requests[1]!.body.messages.find((m: { role: string }) => m.role === 'assistant');
      expect(assistant).toEqual({
        role: 'assistant',
        content: null,
        reasoning_content: 'Need the weather. Calling the tool.',
        tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Zürich"}' }, extra_content: { google: { thought_signature: 'ts-Cp8BAdHtim9' } } }],
      });
    });
  });
});
