import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, MemorySession, ModelError, Runner, UserError, tool, type RunEvent } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { collect, completed, trace } from '../helpers.js';
import { bigTool, compactions, pageText, pagesScript, summaryModel } from './fixtures.js';

const offloadedText = (n: number) =>
  `[Result of fetch_page offloaded to save context: 5000 chars. Its first 40 chars:]\n${pageText(n, 5000).slice(0, 40)}\n[Call recall_tool_result with {"callId":"c${n}"} for the full result.]`;

const policy = { maxInputTokens: 3_000, offload: { previewChars: 40 } };

describe('contextPolicy in a run', () => {
  it('emits context_compacted with exactly what was done, right after turn_started', async () => {
    const model = pagesScript(5);
    const agent = new Agent({ name: 'reader', model, tools: [bigTool(5_000)], contextPolicy: policy });
    const events = await collect(Runner.stream(agent, 'read', { runId: 'r1' }));
    const base = { type: 'context_compacted', runId: 'r1', path: ['reader'], agent: 'reader', reason: 'threshold', stages: ['offload'], cleared: [], summarized: [], summarizedMessages: 0 };
    // Turn 4's request: 3,948 estimated tokens > 3,000; c1 and c2 are offloaded (c3, the newest, is kept) down to 1,544 <= 1,800.
    expect(compactions(events)).toEqual([
      { ...base, turn: 4, offloaded: ['c1', 'c2'], tokensBefore: 3948, tokensAfter: 1544 },
      { ...base, turn: 6, offloaded: ['c3', 'c4'], tokensBefore: 4088, tokensAfter: 1684 },
    ]);
    expect(trace(events).slice(15, 19)).toEqual(['turn_ended', 'turn_started', 'context_compacted', 'message_completed']);
    expect(model.requests[3]!.messages.map((m) => (m.role === 'tool' ? m.content.length : m.role))).toEqual(['user', 'assistant', offloadedText(1).length, 'assistant', offloadedText(2).length, 'assistant', 5000]);
    expect(model.requests[3]!.messages[2]).toEqual({ role: 'tool', callId: 'c1', name: 'fetch_page', content: offloadedText(1), isError: false });
  });

  it('recall_tool_result returns the full stored result, and the offloaded result stays offloaded', async () => {
    const steps = new ScriptedModel([...Array.from({ length: 3 }, (_, i) => call('fetch_page', { n: i + 1 }, `c${i + 1}`)), call('recall_tool_result', { callId: 'c1' }, 'r1'), call('recall_tool_result', { callId: 'nope' }, 'r2'), call('fetch_page', { n: 9 }, 'c9'), text('done')]);
    const agent = new Agent({ name: 'reader', model: steps, tools: [bigTool(5_000)], contextPolicy: { maxInputTokens: 2_000, offload: { previewChars: 40 }, clear: false } });
    const events = await collect(Runner.stream(agent, 'read', { maxTurns: 10 }));
    expect(events.at(-1)!.type).toBe('run_completed');
    const results = completed(events);
    expect(results.map((e) => [e.call.id, e.isError, e.output.length])).toEqual([['c1', false, 5000], ['c2', false, 5000], ['c3', false, 5000], ['r1', false, 5000], ['r2', true, 58], ['c9', false, 5000]]);
    expect(results[3]!.output).toBe(pageText(1, 5000));
    expect(results[4]!.output).toBe('Tool error: No tool result with callId "nope" in this run.');
    // From its first offload on, every request shows c1 as the same preview: recalling it does not undo that.
    const c1 = steps.requests.map((r) => r.messages.find((m) => m.role === 'tool' && m.callId === 'c1')?.content);
    expect(c1.slice(0, 2)).toEqual([undefined, pageText(1, 5000)]);
    const first = c1.indexOf(offloadedText(1));
    expect(first).toBe(2);
    expect(c1.slice(first)).toEqual(Array(c1.length - first).fill(offloadedText(1)));
    // The model saw the recalled result in full, at the end of the request after the recall.
    expect(steps.requests[4]!.messages.at(-1)).toEqual({ role: 'tool', callId: 'r1', name: 'recall_tool_result', content: pageText(1, 5000), isError: false });
    expect(steps.requests[0]!.tools.map((t) => t.name)).toEqual(['fetch_page', 'recall_tool_result']);
  });

  it('changes only what the model is sent: transcript, log and session equal a run without the policy', async () => {
    const runWith = async (contextPolicy: object | undefined) => {
      const store = new MemoryCheckpointStore();
      const session = new MemorySession();
      const model = pagesScript(8);
      const agent = new Agent({ name: 'reader', model, tools: [bigTool(5_000)], ...(contextPolicy ? { contextPolicy } : {}) });
      const handle = Runner.stream(agent, 'read', { runId: 'same', maxTurns: 10, checkpoint: { store, runId: 'same' }, session: { store: session, id: 's' } });
      const events = await collect(handle);
      const result = await handle.result();
      return { events, result, stored: store.load('same')!, history: await session.history('s'), requests: model.requests };
    };
    const plain = await runWith(undefined);
    const compacted = await runWith({ maxInputTokens: 3_000, summarize: { model: summaryModel() } });
    expect(compactions(compacted.events).length).toBeGreaterThan(1);
    expect(compacted.requests.some((r) => r.messages.some((m) => m.content.startsWith('[Result of fetch_page offloaded')))).toBe(true);
    expect(compacted.result.transcript).toEqual(plain.result.transcript);
    expect(compacted.result.output).toBe(plain.result.output);
    expect(compacted.stored.entries).toEqual(plain.stored.entries);
    expect({ ...compacted.stored.head, updatedAt: 0 }).toEqual({ ...plain.stored.head, updatedAt: 0 });
    expect(compacted.history).toEqual(plain.history);
    expect(compacted.history.filter((m) => m.role === 'tool').map((m) => m.content.length)).toEqual(Array(8).fill(5000));
  });

  it('summarises with the run model by default, and the summary request counts toward usage', async () => {
    const model = new ScriptedModel([call('fetch_page', { n: 1 }, 'c1'), call('fetch_page', { n: 2 }, 'c2'), text('The user asked to read; page 1 was read.', { usage: { inputTokens: 100, outputTokens: 10 } }), text('done')]);
    const agent = new Agent({ name: 'reader', model, tools: [bigTool(5_000)], contextPolicy: { maxInputTokens: 1_500, offload: false, clear: false, summarize: {} } });
    const events = await collect(Runner.stream(agent, 'read', { runId: 'r1' }));
    expect(compactions(events)).toEqual([
      { type: 'context_compacted', runId: 'r1', path: ['reader'], agent: 'reader', turn: 3, reason: 'threshold', stages: ['summarize'], offloaded: [], cleared: [], summarized: ['c1'], summarizedMessages: 3, tokensBefore: 2676, tokensAfter: 1423 },
    ]);
    const summaryRequest = model.requests[2]!;
    expect(summaryRequest.tools).toEqual([]);
    expect(summaryRequest.system).toMatch(/^Summarize the conversation below/);
    expect(summaryRequest.messages).toEqual([{ role: 'user', content: `User: read\nAssistant called fetch_page [c1] with {"n":1}\nResult of fetch_page [c1]: ${pageText(1, 5000)}` }]);
    expect(model.requests[3]!.messages).toEqual([
      { role: 'user', content: '[Summary of the earlier conversation]\nThe user asked to read; page 1 was read.' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c2', name: 'fetch_page', arguments: '{"n":2}' }], agent: 'reader' },
      { role: 'tool', callId: 'c2', name: 'fetch_page', content: pageText(2, 5000), isError: false },
    ]);
    const result = (events.at(-1) as Extract<RunEvent, { type: 'run_completed' }>);
    expect(result.usage.requests).toBe(4);
    const ended = events.filter((e): e is Extract<RunEvent, { type: 'turn_ended' }> => e.type === 'turn_ended');
    expect(ended[2]!.usage.inputTokens - ended[1]!.usage.inputTokens).toBe(100 + Math.ceil(5000 / 4));
  });

  it('beforeModelCall hooks see the compacted view; a failing summary fails the run with a ModelError', async () => {
    const seen: number[] = [];
    const model = pagesScript(4);
    const agent = new Agent({
      name: 'reader', model, tools: [bigTool(5_000)], contextPolicy: policy,
      hooks: { beforeModelCall: (request, ctx) => void seen.push(request.messages.reduce((n, m) => n + m.content.length, 0) - ctx.transcript.reduce((n, m) => n + m.content.length, 0)) },
    });
    await Runner.run(agent, 'read');
    // Turn 4 offloaded c1 and c2: the hook saw 2 × (5000 − 190) fewer characters than the transcript holds.
    expect(seen).toEqual([0, 0, 0, -2 * (5000 - offloadedText(1).length), -2 * (5000 - offloadedText(1).length)]);

    const broken = { name: 'broken', async *stream(): AsyncIterable<never> { throw new Error('summariser down'); } };
    const failing = new Agent({ name: 'reader', model: pagesScript(4), tools: [bigTool(5_000)], contextPolicy: { ...policy, offload: false, clear: false, summarize: { model: broken } } });
    const events = await collect(Runner.stream(failing, 'read'));
    const failed = events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>;
    expect(failed.type).toBe('run_failed');
    expect(failed.error).toBeInstanceOf(ModelError);
    expect(failed.error.message).toBe("Context summary by model 'broken' failed: summariser down");
    expect(failed.turns).toBe(4);
  });

  it('rejects a malformed policy and a tool named recall_tool_result with a UserError', async () => {
    const model = new ScriptedModel([text('hi')]);
    expect(() => new Agent({ name: 'a', model, contextPolicy: { maxInputTokens: -1 } })).toThrow(new UserError('contextPolicy.maxInputTokens must be a positive integer, got -1.'));
    expect(() => new Agent({ name: 'a', model, contextPolicy: { maxInputToken: 5 } as never })).toThrow(/^Unknown contextPolicy field 'maxInputToken'; did you mean 'maxInputTokens'\? Expected one of maxInputTokens, contextWindow, compactTo, offload, clear, summarize\.$/);
    expect(() => new Agent({ name: 'a', model, contextPolicy: { compactTo: 1 } })).toThrow('contextPolicy.compactTo must be a number between 0 and 1 (exclusive), got 1.');
    await expect(Runner.run(new Agent({ name: 'a', model }), 'hi', { contextPolicy: { offload: { minChars: 0 } } })).rejects.toThrow('contextPolicy.offload.minChars must be a positive integer, got 0.');
    const clash = tool({ name: 'recall_tool_result', description: 'd', parameters: z.object({}), execute: () => 'x' });
    await expect(Runner.run(new Agent({ name: 'a', model, tools: [clash] }), 'hi', { contextPolicy: {} })).rejects.toThrow("Tool name conflict for 'recall_tool_result': contextPolicy adds a tool of that name.");
    expect(model.requests).toHaveLength(0);
  });
});
