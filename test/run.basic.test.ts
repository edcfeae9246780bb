import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, ModelError, Runner, ScriptExhausted, UserError, tool, type RunEvent } from '../src/index.js';
import { ScriptedModel, call, text } from '../src/entry/testing.js';
import { collect, trace } from './helpers.js';

const add = tool({ name: 'add', description: 'Add two numbers.', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });

describe('a run', () => {
  it('emits the event union in order and ends with exactly one run_completed', async () => {
    const model = new ScriptedModel([call('add', { a: 2, b: 3 }, 'c1'), text('The sum is 5')]);
    const agent = new Agent({ name: 'calc', instructions: 'Add things.', model, tools: [add] });
    const handle = Runner.stream(agent, '2+3?');
    const events = await collect(handle);
    expect(trace(events, [])).toEqual([
      'run_started',
      'turn_started',
      'message_completed',
      'tool_call_started:c1',
      'tool_call_completed:c1',
      'turn_ended',
      'turn_started',
      'text_delta',
      'text_delta',
      'text_delta',
      'text_delta',
      'message_completed',
      'turn_ended',
      'run_completed',
    ]);
    expect(events.filter((e) => e.type === 'text_delta').map((e) => (e as { delta: string }).delta).join('')).toBe('The sum is 5');
    const done = events.find((e) => e.type === 'tool_call_completed')!;
    expect(done).toMatchObject({ result: 5, output: '5', isError: false, terminate: false, path: ['calc'], agent: 'calc', turn: 1 });
    const result = await handle.result();
    expect(result.output).toBe('The sum is 5');
    expect(result.turns).toBe(2);
    expect(result.transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(result.transcript[2]).toEqual({ role: 'tool', callId: 'c1', name: 'add', content: '5', isError: false });
  });

  it('shows the model the system prompt, the transcript and the tool schemas', async () => {
    const model = new ScriptedModel([call('add', { a: 1, b: 1 }, 'c1'), text('2')]);
    await Runner.run(new Agent({ name: 'calc', instructions: 'Be exact.', model, tools: [add] }), 'one plus one');
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]!.system).toBe('Be exact.');
    expect(model.requests[0]!.tools).toEqual([
      {
        name: 'add',
        description: 'Add two numbers.',
        parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
        strict: false,
      },
    ]);
    expect(model.requests[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });

  it('counts usage per turn and in total', async () => {
    const model = new ScriptedModel([
      call('add', { a: 1, b: 1 }, 'c1', { usage: { inputTokens: 10, outputTokens: 4 } }),
      text('2', { usage: { inputTokens: 20, outputTokens: 1 } }),
    ]);
    const handle = Runner.stream(new Agent({ name: 'calc', model, tools: [add] }), 'q');
    const events = await collect(handle);
    const turnUsage = events.filter((e) => e.type === 'turn_ended').map((e) => (e as Extract<RunEvent, { type: 'turn_ended' }>).usage);
    expect(turnUsage).toEqual([
      { inputTokens: 10, outputTokens: 4, totalTokens: 14, requests: 1 },
      { inputTokens: 30, outputTokens: 5, totalTokens: 35, requests: 2 },
    ]);
    expect((await handle.result()).usage).toEqual({ inputTokens: 30, outputTokens: 5, totalTokens: 35, requests: 2 });
  });

  it('reports a tool name conflict as run_started → run_failed(UserError) before any tool runs', async () => {
    let ran = 0;
    const dup = tool({ name: 'add', description: 'again', parameters: z.object({}), execute: () => ran++ });
    const model = new ScriptedModel([call('add', {}, 'c1'), text('x')]);
    const handle = Runner.stream(new Agent({ name: 'calc', model, tools: [add, dup] }), 'q');
    const events = await collect(handle);
    expect(trace(events)).toEqual(['run_started', 'run_failed']);
    const failed = events[1] as Extract<RunEvent, { type: 'run_failed' }>;
    expect(failed.error).toBeInstanceOf(UserError);
    expect(failed.error.message).toBe("Tool name conflict for 'add' from agent tools (also from agent tools).");
    await expect(handle.result()).rejects.toThrow(UserError);
    expect(ran).toBe(0);
    expect(model.requests).toHaveLength(0);
  });

  it('fails with a clear ScriptExhausted error when the script runs out', async () => {
    const model = new ScriptedModel([call('add', { a: 1, b: 2 }, 'c1')]);
    const handle = Runner.stream(new Agent({ name: 'calc', model, tools: [add] }), 'q');
    const events = await collect(handle);
    expect(trace(events)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_started:c1', 'tool_call_completed:c1', 'turn_ended', 'turn_started', 'run_failed']);
    const error = (events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>).error;
    expect(error).toBeInstanceOf(ScriptExhausted);
    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).toBe('ScriptedModel has no reply for request 2: the script has 1 step.');
    await expect(handle.result()).rejects.toBe(error);
  });

  it('turns a throwing model into run_failed(ModelError) and never throws from iteration', async () => {
    const model = {
      name: 'broken',
      // eslint-disable-next-line require-yield
      async *stream() {
        throw new Error('socket hang up');
      },
    };
    const handle = Runner.stream(new Agent({ name: 'a', model }), 'q');
    const events = await collect(handle);
    expect(trace(events)).toEqual(['run_started', 'turn_started', 'run_failed']);
    const error = (events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>).error;
    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).toBe("Model 'broken' failed: socket hang up");
  });

  it('rejects a malformed tool call part from the model with a ModelError', async () => {
    const model = {
      name: 'bad-parts',
      async *stream() {
        yield { type: 'tool_call' as const, call: { id: 'c1', name: 'add', arguments: { a: 1 } as unknown as string } };
      },
    };
    await expect(Runner.run(new Agent({ name: 'a', model, tools: [add] }), 'q')).rejects.toThrow(
      'Malformed tool call #1 from the model: {"id":"c1","name":"add","arguments":{"a":1}}',
    );
  });

  it('lets tools read the run context and post to the mailbox', async () => {
    const seen: unknown[] = [];
    const probe = tool({
      name: 'probe',
      description: 'd',
      parameters: z.object({}),
      execute: (_args, ctx) => {
        seen.push([ctx.runId, ctx.callId, ctx.turn, ctx.agent.name, ctx.deps, ctx.transcript.length, ctx.signal.aborted]);
        ctx.mailbox.post('note from probe');
        return 'ok';
      },
    });
    const model = new ScriptedModel([call('probe', {}, 'p1'), text('done')]);
    await Runner.run(new Agent({ name: 'a', model, tools: [probe] }), 'q', { runId: 'run-1', context: { user: 'u1' } });
    expect(seen).toEqual([['run-1', 'p1', 1, 'a', { user: 'u1' }, 2, false]]);
    expect(model.requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'note from probe' });
  });
});

describe('malformed model output', () => {
  it('gives each occurrence of a repeated call id exactly one result, paired by occurrence', async () => {
    const echo = tool({ name: 'echo', description: 'd', parameters: z.object({ v: z.string() }), execute: ({ v }) => `got ${v}` });
    const model = new ScriptedModel([
      { text: '', calls: [{ id: 'x', name: 'echo', arguments: '{"v":"one"}' }, { id: 'x', name: 'echo', arguments: '{"v":"two"}' }, { id: 'x', name: 'nope', arguments: '{}' }] },
      text('done'),
    ]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: [echo] }), 'q'));
    const done = events.filter((e) => e.type === 'tool_call_completed');
    expect(done.map((e) => [e.call.id, e.call.arguments, e.output])).toEqual([
      ['x', '{}', "Tool error: unknown tool 'nope'. Available tools: echo."],
      ['x', '{"v":"one"}', 'got one'],
      ['x', '{"v":"two"}', 'got two'],
    ]);
    expect(events.at(-1)!.type).toBe('run_completed');
    // The model sees one result per occurrence, in completion order, each with the model's id.
    expect(model.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => [m.role === 'tool' && m.callId, m.content])).toEqual([
      ['x', "Tool error: unknown tool 'nope'. Available tools: echo."],
      ['x', 'got one'],
      ['x', 'got two'],
    ]);
  });

  it('replaces an empty call id with a generated one', async () => {
    const model = new ScriptedModel([{ text: '', calls: [{ id: '', name: 'add', arguments: '{"a":1,"b":2}' }] }, text('done')]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: [add] }), 'q'));
    const ids = events.filter((e) => e.type === 'tool_call_started' || e.type === 'tool_call_completed').map((e) => ('call' in e ? e.call.id : ''));
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/^call_[A-Za-z0-9_-]{12}$/);
    expect(ids[1]).toBe(ids[0]);
    expect(events.at(-1)!.type).toBe('run_completed');
  });
});
