import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, BudgetExceeded, MaxTurnsExceeded, RunCancelled, Runner, tool, type RunEvent } from '../src/index.js';
import { ScriptedModel, batch, call, text } from '../src/entry/testing.js';
import { collect, completed, deferred, flush, trace } from './helpers.js';

const echo = tool({ name: 'echo', description: 'd', parameters: z.object({}), execute: (_a, ctx) => ctx.callId });
const failure = (events: RunEvent[]) => (events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>).error;

describe('budgets', () => {
  it('maxTurns fails with MaxTurnsExceeded at the start of the turn past the limit', async () => {
    const model = new ScriptedModel([call('echo', {}, 'a'), call('echo', {}, 'b'), text('never')]);
    const handle = Runner.stream(new Agent({ name: 'x', model, tools: [echo] }), 'q', { maxTurns: 2 });
    const events = await collect(handle);
    expect(trace(events).slice(-3)).toEqual(['tool_call_completed:b', 'turn_ended', 'run_failed']);
    expect(failure(events)).toBeInstanceOf(MaxTurnsExceeded);
    expect(failure(events).message).toBe('max turns 2 exceeded');
    expect(model.requests).toHaveLength(2);
  });

  it('maxToolCalls counts each call in preflight; in-flight calls finish, the rest get a synthetic result', async () => {
    const gate = deferred<string>();
    const slow = tool({ name: 'slow', description: 'd', parameters: z.object({}), execute: () => gate.promise });
    const model = new ScriptedModel([batch([['slow', {}, 'a'], ['slow', {}, 'b'], ['slow', {}, 'c'], ['slow', {}, 'd']]), text('never')]);
    const handle = Runner.stream(new Agent({ name: 'x', model, tools: [slow] }), 'q', { budget: { maxToolCalls: 2 } });
    const reading = collect(handle);
    await flush();
    gate.resolve('ok');
    const events = await reading;
    expect(trace(events).filter((t) => t.includes(':') || t === 'run_failed')).toEqual([
      'tool_call_started:a',
      'tool_call_started:b',
      'tool_call_completed:c',
      'tool_call_completed:d',
      'tool_call_completed:a',
      'tool_call_completed:b',
      'run_failed',
    ]);
    expect(completed(events).map((e) => [e.call.id, e.output])).toEqual([
      ['c', 'Tool error: tool call count 3 exceeds budget 2'],
      ['d', 'Tool error: not executed: tool call count 3 exceeds budget 2'],
      ['a', 'ok'],
      ['b', 'ok'],
    ]);
    const error = failure(events) as BudgetExceeded;
    expect(error).toBeInstanceOf(BudgetExceeded);
    expect([error.kind, error.used, error.limit, error.message]).toEqual(['toolCalls', 3, 2, 'tool call count 3 exceeds budget 2']);
    expect(model.requests).toHaveLength(1);
  });

  it('token budgets are checked after each model reply; unrun calls still get their one result', async () => {
    const model = new ScriptedModel([call('echo', {}, 'a', { usage: { inputTokens: 5, outputTokens: 50 } }), text('never')]);
    const handle = Runner.stream(new Agent({ name: 'x', model, tools: [echo] }), 'q', { budget: { maxOutputTokens: 10 } });
    const events = await collect(handle);
    expect(trace(events)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_completed:a', 'run_failed']);
    expect(completed(events)[0]!.output).toBe('Tool error: not executed: output tokens 50 exceeds budget 10');
    expect(failure(events).message).toBe('output tokens 50 exceeds budget 10');
    await expect(handle.result()).rejects.toBeInstanceOf(BudgetExceeded);
  });

  it.each([
    [{ maxInputTokens: 8 }, 'input tokens 10 exceeds budget 8'],
    [{ maxTotalTokens: 12 }, 'total tokens 13 exceeds budget 12'],
  ])('checks %j', async (budget, message) => {
    const model = new ScriptedModel([text('hi', { usage: { inputTokens: 10, outputTokens: 3 } })]);
    await expect(Runner.run(new Agent({ name: 'x', model }), 'q', { budget })).rejects.toThrow(message);
  });

  it('maxDurationMs is checked at the turn start', async () => {
    // The tool outlasts the budget, so the second turn's start is over it; the budget leaves the
    // first turn's start a wide margin even on a loaded machine (5 ms and 200 ms did not, in CI).
    const sleepy = tool({ name: 'sleepy', description: 'd', parameters: z.object({}), execute: () => new Promise((r) => setTimeout(() => r('z'), 1_500)) });
    const model = new ScriptedModel([call('sleepy', {}, 's'), text('never')]);
    const handle = Runner.stream(new Agent({ name: 'x', model, tools: [sleepy] }), 'q', { budget: { maxDurationMs: 1_000 } });
    const events = await collect(handle);
    expect(trace(events).slice(-3)).toEqual(['tool_call_completed:s', 'turn_ended', 'run_failed']);
    expect(failure(events)).toMatchObject({ kind: 'durationMs', limit: 1_000 });
    expect(model.requests).toHaveLength(1);
  });
});

describe('cancellation', () => {
  it('handle.cancel aborts in-flight tools, closes every call and ends with run_failed(RunCancelled)', async () => {
    const aborted: string[] = [];
    const hang = tool({
      name: 'hang',
      description: 'd',
      parameters: z.object({}),
      execute: (_a, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => { aborted.push(ctx.callId); resolve('late'); })),
    });
    const model = new ScriptedModel([batch([['hang', {}, 'h1'], ['hang', {}, 'h2']]), text('never')]);
    const handle = Runner.stream(new Agent({ name: 'x', model, tools: [hang] }), 'q');
    const reading = collect(handle);
    await flush();
    handle.cancel('stop now');
    const events = await reading;
    await flush();
    expect(aborted).toEqual(['h1', 'h2']);
    expect(trace(events)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_started:h1', 'tool_call_started:h2', 'tool_call_completed:h1', 'tool_call_completed:h2', 'run_failed']);
    expect(completed(events).map((e) => e.output)).toEqual(['Tool error: run cancelled: stop now', 'Tool error: run cancelled: stop now']);
    const error = failure(events) as RunCancelled;
    expect(error).toBeInstanceOf(RunCancelled);
    expect(error.reason).toBe('stop now');
    // Late settles after cancel never produce a second result.
    expect(completed(events)).toHaveLength(2);
  });

  it('an AbortSignal option cancels the run, also when aborted before start', async () => {
    const controller = new AbortController();
    const gate = deferred<string>();
    const slow = tool({ name: 'slow', description: 'd', parameters: z.object({}), execute: () => gate.promise });
    const model = new ScriptedModel([call('slow', {}, 's'), text('never')]);
    const running = Runner.run(new Agent({ name: 'x', model, tools: [slow] }), 'q', { signal: controller.signal });
    await flush();
    controller.abort(new Error('client went away'));
    await expect(running).rejects.toThrow('Run cancelled: client went away');

    const pre = new AbortController();
    pre.abort('early');
    const handle = Runner.stream(new Agent({ name: 'x', model: new ScriptedModel([text('never')]) }), 'q', { signal: pre.signal });
    const events = await collect(handle);
    expect(trace(events).at(-1)).toBe('run_failed');
    expect(trace(events).filter((t) => t === 'run_failed' || t === 'run_completed')).toHaveLength(1);
    await expect(handle.result()).rejects.toThrow('Run cancelled: early');
  });

  it('a tool throwing RunCancelled ends the run and aborts its siblings', async () => {
    const aborted: string[] = [];
    const hang = tool({ name: 'hang', description: 'd', parameters: z.object({}), execute: (_a, ctx) => new Promise((r) => ctx.signal.addEventListener('abort', () => { aborted.push(ctx.callId); r('x'); })) });
    const quit = tool({ name: 'quit', description: 'd', parameters: z.object({}), execute: async () => { throw new RunCancelled('tool says stop'); } });
    const model = new ScriptedModel([batch([['hang', {}, 'h'], ['quit', {}, 'q']]), text('never')]);
    const handle = Runner.stream(new Agent({ name: 'x', model, tools: [hang, quit] }), 'q');
    const events = await collect(handle);
    await flush();
    expect(aborted).toEqual(['h']);
    expect(completed(events).map((e) => [e.call.id, e.output])).toEqual([
      ['q', 'Tool error: Run cancelled: tool says stop'],
      ['h', 'Tool error: run cancelled: tool says stop'],
    ]);
    expect((failure(events) as RunCancelled).reason).toBe('tool says stop');
  });

  it('cancel after the end is a no-op', async () => {
    const handle = Runner.stream(new Agent({ name: 'x', model: new ScriptedModel([text('hi')]) }), 'q');
    const events = await collect(handle);
    handle.cancel('late');
    expect(trace(events).at(-1)).toBe('run_completed');
    expect((await handle.result()).output).toBe('hi');
  });
});

describe('run option validation', () => {
  const agent = () => new Agent({ name: 'x', model: new ScriptedModel([text('hi')]) });
  it.each([
    [{ maxTurns: 0 }, 'maxTurns must be a positive integer, got 0.'],
    [{ budget: { maxToolCall: 3 } }, "Unknown budget field 'maxToolCall'; did you mean 'maxToolCalls'? Expected one of maxInputTokens, maxOutputTokens, maxTotalTokens, maxToolCalls, maxDurationMs."],
    [{ budget: { maxToolCalls: -1 } }, "Budget field 'maxToolCalls' must be a non-negative number, got -1."],
    [{ approvalTimeoutMs: Number.NaN }, 'approvalTimeoutMs must be a non-negative number, got NaN.'],
  ])('rejects %j with a UserError as run_started → run_failed', async (options, message) => {
    const handle = Runner.stream(agent(), 'q', options as never);
    const events = await collect(handle);
    expect(trace(events)).toEqual(['run_started', 'run_failed']);
    expect(failure(events).message).toBe(message);
    expect(failure(events).name).toBe('UserError');
  });

  it('rejects input that is neither a string nor messages', async () => {
    await expect(Runner.run(agent(), 42 as never)).rejects.toThrow('Run input must be a string or an array of messages, got number.');
  });
});
