import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, UserError, tool, toolResult, type RunEvent } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { collect, deferred, flush } from '../helpers.js';

const injected = (events: readonly RunEvent[]) =>
  events.filter((e): e is Extract<RunEvent, { type: 'user_message_injected' }> => e.type === 'user_message_injected').map((e) => [e.turn, e.source, e.message.content, e.id]);
const userTexts = (model: ScriptedModel, request: number) => model.requests[request]!.messages.filter((m) => m.role === 'user').map((m) => m.content);

describe('steer', () => {
  it('a steer sent before the first model call is in the first request, after the input', async () => {
    const model = new ScriptedModel([text('ok')]);
    const handle = Runner.stream(new Agent({ name: 'a', model }), 'hello');
    expect(handle.steer('answer in French')).toBe('steer_1');
    const events = await collect(handle);
    expect(userTexts(model, 0)).toEqual(['hello', 'answer in French']);
    expect(events.map((e) => e.type)).toEqual(['run_started', 'turn_started', 'user_message_injected', 'text_delta', 'message_completed', 'turn_ended', 'run_completed']);
    expect(injected(events)).toEqual([[1, 'steer', 'answer in French', 'steer_1']]);
  });

  it('a steer sent while tools run is seen at the next request', async () => {
    const gate = deferred<string>();
    const slow = tool({ name: 'slow', description: 'd', parameters: z.object({}), execute: () => gate.promise });
    const model = new ScriptedModel([call('slow', {}, 's'), text('done')]);
    const handle = Runner.stream(new Agent({ name: 'a', model, tools: [slow] }), 'go');
    const reading = collect(handle);
    await flush();
    handle.steer('also check the weather');
    gate.resolve('slow result');
    const events = await reading;
    expect(model.requests[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(userTexts(model, 1)).toEqual(['go', 'also check the weather']);
    expect(injected(events)).toEqual([[2, 'steer', 'also check the weather', 'steer_1']]);
  });

  it('a steer that arrives while the final reply streams makes the run continue', async () => {
    const gate = deferred<void>();
    const script = new ScriptedModel([text('first answer'), text('second answer')]);
    let requests = 0;
    const model = {
      name: 'slow',
      async *stream(request: Parameters<ScriptedModel['stream']>[0]) {
        if (++requests === 1) await gate.promise;
        yield* script.stream(request);
      },
    };
    const handle = Runner.stream(new Agent({ name: 'a', model }), 'q');
    const reading = collect(handle);
    await flush();
    handle.steer('wait, one more thing');
    gate.resolve();
    await reading;
    const result = await handle.result();
    expect(result.output).toBe('second answer');
    expect(result.turns).toBe(2);
    expect(userTexts(script, 1)).toEqual(['q', 'wait, one more thing']);
  });

  it('unsteer withdraws an unread message (true) and is a no-op once it was read (false)', async () => {
    const model = new ScriptedModel([text('ok')]);
    const handle = Runner.stream(new Agent({ name: 'a', model }), 'q');
    const keep = handle.steer('keep me');
    const drop = handle.steer('drop me');
    expect(handle.unsteer(drop)).toBe(true);
    expect(handle.unsteer(drop)).toBe(false);
    await collect(handle);
    expect(userTexts(model, 0)).toEqual(['q', 'keep me']);
    expect(handle.unsteer(keep)).toBe(false);
    expect(handle.unsteer('steer_99')).toBe(false);
  });

  it('unsteer after the run ended withdraws a message it never read (true) without sending anything to the stopped run', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const model = new ScriptedModel([text('ok')]);
      const handle = Runner.stream(new Agent({ name: 'a', model }), 'q');
      const unread = handle.steer('never read');
      handle.cancel();
      const events = await collect(handle);
      expect([events.at(-1)?.type, model.requests.length, handle.unsteer(unread), handle.unsteer(unread)]).toEqual(['run_failed', 0, true, false]);
      expect(warn.mock.calls).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });

  it('steeringMode one-at-a-time takes one queued message per request; the rest keep the run going', async () => {
    const model = new ScriptedModel([text('r1'), text('r2'), text('r3')]);
    const handle = Runner.stream(new Agent({ name: 'a', model }), 'q', { steeringMode: 'one-at-a-time' });
    handle.steer('s1');
    handle.steer('s2');
    const events = await collect(handle);
    expect(injected(events)).toEqual([
      [1, 'steer', 's1', 'steer_1'],
      [2, 'steer', 's2', 'steer_2'],
    ]);
    expect((await handle.result()).output).toBe('r2');
  });

  it('steering a finished run is a typed error', async () => {
    const handle = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([text('ok')]) }), 'q');
    await collect(handle);
    expect(() => handle.steer('late')).toThrow(UserError);
    expect(() => handle.steer('late')).toThrow(/has ended; it takes no more messages/);
  });
});

describe('followUp', () => {
  it('starts another turn only when the run would otherwise end', async () => {
    const noop = tool({ name: 'noop', description: 'd', parameters: z.object({}), execute: () => 'ok' });
    const model = new ScriptedModel([call('noop', {}, 'n'), text('first done'), text('follow-up done')]);
    const handle = Runner.stream(new Agent({ name: 'a', model, tools: [noop] }), 'q');
    handle.followUp('now summarise');
    const events = await collect(handle);
    // Not in turn 2 (the tool turn continues anyway): only after the final reply of turn 2.
    expect(injected(events)).toEqual([[3, 'follow_up', 'now summarise', 'followup_1']]);
    expect(userTexts(model, 1)).toEqual(['q']);
    expect(userTexts(model, 2)).toEqual(['q', 'now summarise']);
    expect((await handle.result()).output).toBe('follow-up done');
  });

  it('a follow-up after a terminating batch gives the model another turn', async () => {
    const stop = tool({ name: 'stop', description: 'd', parameters: z.object({}), execute: () => toolResult({ content: 'stopped', terminate: true }) });
    const model = new ScriptedModel([call('stop', {}, 's'), text('after the follow-up')]);
    const handle = Runner.stream(new Agent({ name: 'a', model, tools: [stop] }), 'q');
    handle.followUp('one more');
    const events = await collect(handle);
    expect(injected(events)).toEqual([[2, 'follow_up', 'one more', 'followup_1']]);
    expect((await handle.result()).output).toBe('after the follow-up');
  });
});

describe('maxConcurrentToolCalls', () => {
  it('caps calls in flight; the rest start in request order as slots free up', async () => {
    const gates = new Map<string, ReturnType<typeof deferred<string>>>();
    const running = new Set<string>();
    let peak = 0;
    const work = tool({
      name: 'work', description: 'd', parameters: z.object({ n: z.string() }),
      execute: async ({ n }) => {
        running.add(n);
        peak = Math.max(peak, running.size);
        const gate = deferred<string>();
        gates.set(n, gate);
        const out = await gate.promise;
        running.delete(n);
        return out;
      },
    });
    const model = new ScriptedModel([batch(['a', 'b', 'c', 'd'].map((n) => ['work', { n }, n] as const)), text('done')]);
    const handle = Runner.stream(new Agent({ name: 'x', model, tools: [work] }), 'q', { maxConcurrentToolCalls: 2 });
    const order: string[] = [];
    const reading = collect(handle, (e) => {
      if (e.type === 'tool_call_started') order.push(`start ${e.call.id}`);
      if (e.type === 'tool_call_completed') order.push(`done ${e.call.id}`);
    });
    await flush();
    expect(order).toEqual(['start a', 'start b']);
    expect(JSON.stringify(handle.actor.getSnapshot().value)).toBe('{"turn":{"executing":"throttled"}}');
    gates.get('b')!.resolve('B');
    await flush();
    expect(order).toEqual(['start a', 'start b', 'done b', 'start c']);
    gates.get('a')!.resolve('A');
    await flush();
    gates.get('c')!.resolve('C');
    await flush();
    gates.get('d')!.resolve('D');
    await reading;
    expect(order).toEqual(['start a', 'start b', 'done b', 'start c', 'done a', 'start d', 'done c', 'done d']);
    expect(peak).toBe(2);
  });

  it('rejects a non-positive cap with a UserError', async () => {
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([text('x')]) }), 'q', { maxConcurrentToolCalls: 0 }));
    expect(events.map((e) => e.type)).toEqual(['run_started', 'run_failed']);
    expect((events[1] as Extract<RunEvent, { type: 'run_failed' }>).error.message).toBe('maxConcurrentToolCalls must be a positive integer, got 0.');
  });
});

describe('run input and instructions', () => {
  it('takes a conversation: system messages join the instructions, the rest the transcript', async () => {
    const model = new ScriptedModel([text('ok')]);
    const agent = new Agent({ name: 'a', model, instructions: 'Be brief.' });
    const result = await Runner.run(agent, [
      { role: 'system', content: 'The user is in Rome.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello', toolCalls: [], agent: 'a' },
      { role: 'user', content: 'weather?' },
    ], { instructions: 'Use metric units.' });
    expect(model.requests[0]!.system).toBe('Be brief.\n\nUse metric units.\n\nThe user is in Rome.');
    expect(model.requests[0]!.messages.map((m) => [m.role, m.content])).toEqual([['user', 'hi'], ['assistant', 'hello'], ['user', 'weather?']]);
    expect(result).toMatchObject({ output: 'ok', finalOutput: 'ok', finishReason: 'stop' });
    expect(result.lastInputTokens).toBeGreaterThan(0);
  });

  it('keeps the instructions option across a handoff', async () => {
    const second = new Agent({ name: 'B', model: new ScriptedModel([text('from B')]), instructions: 'I am B.' });
    const first = new Agent({ name: 'A', model: new ScriptedModel([call('transfer_to_b', {}, 'h')]), handoffs: [second] });
    await Runner.run(first, 'q', { instructions: 'Always cite sources.' });
    expect((second.model as ScriptedModel).requests[0]!.system).toBe('I am B.\n\nAlways cite sources.');
  });

  it.each([
    [[], 'Run input must not be an empty array of messages.'],
    // Any other string is a custom role (test/runs/custom-roles.test.ts); a role that is no string is refused.
    [[{ role: 7, content: 'x' }], 'Run input message #1 needs a role (system, user, assistant, tool, or a custom role: a non-empty string), got 7.'],
    [[{ role: 'note', content: 7 }], "Run input message #1: a custom message (role 'note') needs string content."],
    [[{ role: 'user', content: 3 }], 'Run input message #1 (user) needs string content or an array of content parts.'],
    [42, 'Run input must be a string or an array of messages, got number.'],
  ])('rejects input %j with a UserError before anything runs', async (input, message) => {
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([text('x')]) }), input as never));
    expect(events.map((e) => e.type)).toEqual(['run_started', 'run_failed']);
    expect((events[1] as Extract<RunEvent, { type: 'run_failed' }>).error).toBeInstanceOf(UserError);
    expect((events[1] as Extract<RunEvent, { type: 'run_failed' }>).error.message).toBe(message);
  });
});
