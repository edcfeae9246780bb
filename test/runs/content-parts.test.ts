import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, UserError, tool, toolResult, type CheckpointEntry, type ContentPart, type RunEvent, type ToolResultMessage } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { aiSdkModel } from '../../src/models/ai-sdk.js';
import { toPrompt } from '../../src/models/ai-sdk-request.js';
import { CHECKPOINT_SCHEMA_VERSION, decodeEntry } from '../../src/store/format.js';
import { collect } from '../helpers.js';
import { fakeLanguageModel, finish } from '../models/fake-language-model.js';
import { startChatServer, textReply, type ChatServer } from '../models/openai-server.js';
import { FIXTURE_PNG } from '../fixtures/mcp/fixture-server.mjs';

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const chartParts: ContentPart[] = [
  { type: 'text', text: 'the chart:' },
  { type: 'image', data: FIXTURE_PNG, mediaType: 'image/png' },
];
const chartText = 'the chart:\n[image: image/png, 70 bytes]';
const chart = tool({ name: 'chart', description: 'Draw a chart.', parameters: z.object({}), execute: () => toolResult({ content: chartParts, details: { drawn: 1 } }) });

const completedCall = (events: RunEvent[]) => events.find((e): e is Extract<RunEvent, { type: 'tool_call_completed' }> => e.type === 'tool_call_completed')!;

describe('content parts in tool results', () => {
  it('keeps the parts in the event, the transcript and the checkpoint log; text models see the projection', async () => {
    const model = new ScriptedModel([call('chart', {}, 'c1'), text('Here it is.')]);
    const store = new MemoryCheckpointStore();
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: [chart] }), 'draw', { checkpoint: { store, runId: 'parts-1' } }));
    expect(completedCall(events)).toMatchObject({ output: chartText, isError: false, parts: chartParts, result: chartParts, details: { drawn: 1 } });
    const expected: ToolResultMessage = { role: 'tool', callId: 'c1', name: 'chart', content: chartText, isError: false, parts: chartParts };
    expect(model.requests[1]!.messages.at(-1)).toEqual(expected);
    const stored = store.load('parts-1')!.entries.find((e) => e.kind === 'result')!;
    expect(stored).toEqual({ kind: 'result', turn: 1, message: expected });
    expect(decodeEntry(JSON.stringify(stored), 'entry 3', CHECKPOINT_SCHEMA_VERSION)).toEqual(stored);
  });

  it('an AI SDK provider that takes media in tool results gets a content output with image-data', async () => {
    const provider = fakeLanguageModel(
      [
        { parts: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'chart', input: '{}' }, finish('tool-calls')] },
        { parts: [{ type: 'text-delta', id: 't', delta: 'Nice.' }, finish()] },
      ],
      { provider: 'anthropic.messages' },
    );
    const model = aiSdkModel(provider);
    expect(model.contentParts).toEqual({ toolResults: true, userInput: true });
    await Runner.run(new Agent({ name: 'a', model, tools: [chart] }), 'draw');
    const toolMessage = provider.calls[1]!.prompt.find((m) => m.role === 'tool')!;
    expect(toolMessage.content).toEqual([
      {
        type: 'tool-result',
        toolCallId: 'c1',
        toolName: 'chart',
        output: { type: 'content', value: [{ type: 'text', text: 'the chart:' }, { type: 'image-data', data: FIXTURE_PNG, mediaType: 'image/png' }] },
      },
    ]);
  });

  it('an openai-compatible provider gets the text projection (its tool messages are text only)', async () => {
    server = await startChatServer([
      { kind: 'sse', chunks: [{ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'chart', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] }] },
      textReply('Nice.'),
    ]);
    const model = aiSdkModel(createOpenAICompatible({ baseURL: server.baseURL, name: 'local', apiKey: 'k' })('m'));
    expect(model.contentParts).toEqual({ toolResults: false, userInput: true });
    await Runner.run(new Agent({ name: 'a', model, tools: [chart] }), 'draw');
    expect(server.requests[1]!.body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'c1', content: chartText });
  });

  it('a result over maxOutputChars keeps only its truncated text; an afterToolCall hook that rewrites the text drops the parts', async () => {
    const small = tool({ name: 'chart', description: 'd', parameters: z.object({}), maxOutputChars: 12, execute: () => toolResult({ content: chartParts }) });
    const truncated = completedCall(await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('chart', {}, 'c1'), text('ok')]), tools: [small] }), 'go')));
    expect(truncated.parts).toBeUndefined();
    expect(truncated.result).toBeUndefined();
    expect(truncated.output).toBe('the chart\n\n[... tool output truncated: kept 12 of 39 chars ...]\n\nes]');

    const model = new ScriptedModel([call('chart', {}, 'c1'), text('ok')]);
    const hooked = new Agent({ name: 'a', model, tools: [chart], hooks: { afterToolCall: () => ({ output: 'redacted' }) } });
    expect(completedCall(await collect(Runner.stream(hooked, 'go')))).toMatchObject({ output: 'redacted' });
    expect(model.requests[1]!.messages.at(-1)).toEqual({ role: 'tool', callId: 'c1', name: 'chart', content: 'redacted', isError: false });
  });

  it('text-only parts are plain text; arrays that are not parts stay data', async () => {
    const returning = async (content: unknown) => {
      const t = tool({ name: 't', description: 'd', parameters: z.object({}), execute: () => toolResult({ content }) });
      return completedCall(await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('t', {}, 'c1'), text('ok')]), tools: [t] }), 'go')));
    };
    const textOnly = await returning([{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }]);
    expect(textOnly.output).toBe('a\nb');
    expect('parts' in textOnly).toBe(false);
    const rows = await returning([{ type: 'row', n: 1 }]);
    expect(rows.output).toBe('[{"type":"row","n":1}]');
    expect('parts' in rows).toBe(false);
  });

  it('a damaged part is a UserError from toolResult, and the call gets it as its error result', async () => {
    expect(() => toolResult({ content: [{ type: 'text', text: 'x' }, { type: 'image', data: 'not base64!', mediaType: 'image/png' }] })).toThrow(
      new UserError("toolResult: content part 2 needs base64 'data' (no data: prefix)."),
    );
    expect(() => toolResult({ content: [{ type: 'image', data: FIXTURE_PNG, mediaType: 'application/pdf' }] })).toThrow('toolResult: content part 1 is an image but its mediaType is "application/pdf".');
    const broken = tool({ name: 'chart', description: 'd', parameters: z.object({}), execute: () => toolResult({ content: [{ type: 'file', data: FIXTURE_PNG }] as never }) });
    const done = completedCall(await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('chart', {}, 'c1'), text('ok')]), tools: [broken] }), 'go')));
    expect(done).toMatchObject({ isError: true, output: 'Tool error: toolResult: content part 1 needs a \'mediaType\' such as "application/pdf".' });
  });
});

describe('content parts in the stored log', () => {
  const result = (parts: unknown) => JSON.stringify({ kind: 'result', turn: 1, message: { role: 'tool', callId: 'c1', name: 'chart', content: 'x', isError: false, parts } });

  it('old records without parts load as they are; damaged parts are a corrupt-record UserError', () => {
    const old: CheckpointEntry = { kind: 'result', turn: 1, message: { role: 'tool', callId: 'c1', name: 'chart', content: 'x', isError: false } };
    expect(decodeEntry(JSON.stringify(old), 'entry 3', CHECKPOINT_SCHEMA_VERSION)).toEqual(old);
    expect(() => decodeEntry(result([{ type: 'image', data: 'QUJD', mediaType: 'image/png' }, { type: 'video' }]), "run 'r' entry 3", CHECKPOINT_SCHEMA_VERSION)).toThrow(
      new UserError(`run 'r' entry 3 is corrupt: field 'message.parts' part 2 has an unknown type "video"; expected text, image or file.`),
    );
    expect(() => decodeEntry(result([]), 'entry 3', CHECKPOINT_SCHEMA_VERSION)).toThrow("entry 3 is corrupt: field 'message.parts' must hold at least one content part.");
    const reply = JSON.stringify({ kind: 'reply', turn: 1, message: { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'n', arguments: '{}', providerMetadata: 'sig' }], agent: 'a' } });
    expect(() => decodeEntry(reply, 'entry 2', CHECKPOINT_SCHEMA_VERSION)).toThrow("entry 2 is corrupt: field 'message.toolCalls[0].providerMetadata' must be an object keyed by provider.");
  });
});

describe('user input with image parts', () => {
  const input = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'What is in this picture?' }, { type: 'image' as const, data: FIXTURE_PNG, mediaType: 'image/png' }] }];

  it('goes to an openai-compatible provider as an image_url data URL; the transcript keeps the parts', async () => {
    server = await startChatServer([textReply('A single pixel.')]);
    const model = aiSdkModel(createOpenAICompatible({ baseURL: server.baseURL, name: 'local', apiKey: 'k' })('m'));
    const result = await Runner.run(new Agent({ name: 'a', model }), input);
    expect(result.output).toBe('A single pixel.');
    expect(result.transcript[0]).toEqual({ role: 'user', content: 'What is in this picture?\n[image: image/png, 70 bytes]', parts: input[0]!.content });
    expect(server.requests[0]!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${FIXTURE_PNG}` } }] },
    ]);
  });

  it('a model without media support sees the projection; a damaged input part fails the run before any request', async () => {
    expect(toPrompt('', [{ role: 'user', content: 'hi\n[image: image/png, 70 bytes]', parts: input[0]!.content }], { toolResults: false, userInput: false })).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi\n[image: image/png, 70 bytes]' }] },
    ]);
    const model = new ScriptedModel([text('x')]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model }), [{ role: 'user', content: [{ type: 'image', data: FIXTURE_PNG, mediaType: 'png' }] }]));
    expect(events.at(-1)).toMatchObject({ type: 'run_failed', error: { name: 'UserError', message: 'Run input message #1 (user): content part 1 needs a \'mediaType\' such as "image/png".' } });
    expect(model.requests).toHaveLength(0);
  });
});
