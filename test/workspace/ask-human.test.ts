import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, RunCancelled, Runner, tool, type RunContext } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { askHuman } from '../../src/tools/ask-human.js';
import { collect, completed, deferred, trace } from '../helpers.js';

describe('askHuman', () => {
  it('asks through the channel and returns the answer to the model', async () => {
    const asked: Array<[string, string]> = [];
    const ask = askHuman(async (question, ctx) => {
      asked.push([question, ctx.callId]);
      return 'blue';
    });
    expect(ask).toMatchObject({ name: 'ask_human', parallel: false });
    const model = new ScriptedModel([call('ask_human', { question: 'Which color?' }, 'q1'), text('Blue it is.')]);
    const result = await Runner.run(new Agent({ name: 'designer', model, tools: [ask] }), 'paint it');
    expect(asked).toEqual([['Which color?', 'q1']]);
    expect(result.transcript.find((m) => m.role === 'tool')).toEqual({ role: 'tool', callId: 'q1', name: 'ask_human', content: 'blue', isError: false });
    expect(result.output).toBe('Blue it is.');
  });

  it('is a barrier: it waits for calls in flight and nothing starts while the person answers', async () => {
    const answer = deferred<string>();
    const lookup = tool({ name: 'lookup', description: 'Look up.', parameters: z.object({}), execute: async () => 'found' });
    const model = new ScriptedModel([
      batch([
        ['lookup', {}, 'before'],
        ['ask_human', { question: 'Proceed?' }, 'ask'],
        ['lookup', {}, 'after'],
      ]),
      text('ok'),
    ]);
    const handle = Runner.stream(new Agent({ name: 'a', model, tools: [lookup, askHuman(() => answer.promise)] }), 'go');
    const events = await collect(handle, (e) => {
      if (e.type === 'tool_call_started' && e.call.id === 'ask') setTimeout(() => answer.resolve('yes'), 0);
    });
    expect(trace(events).filter((t) => t.includes(':'))).toEqual([
      'tool_call_started:before',
      'tool_call_completed:before',
      'tool_call_started:ask',
      'tool_call_completed:ask',
      'tool_call_started:after',
      'tool_call_completed:after',
    ]);
  });

  it('a failing channel or a non-string answer is an error result; an empty answer says so', async () => {
    const model = new ScriptedModel([
      batch([
        ['nobody', { question: 'Anyone?' }, 'fail'],
        ['odd', { question: 'Number?' }, 'odd'],
        ['silent', { question: 'Hello?' }, 'silent'],
      ]),
      text('ok'),
    ]);
    const tools = [
      askHuman(() => Promise.reject(new Error('no one is around')), { name: 'nobody' }),
      askHuman(() => 42 as unknown as string, { name: 'odd' }),
      askHuman(() => '', { name: 'silent', description: 'Say nothing.' }),
    ];
    expect(tools[2]!.description).toBe('Say nothing.');
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools }), 'go'));
    expect(Object.fromEntries(completed(events).map((e) => [e.call.id, [e.output, e.isError]]))).toEqual({
      fail: ['Tool error: no one is around', true],
      odd: ['Tool error: the human channel answered with number, not a string.', true],
      silent: ['(no answer)', false],
    });
  });

  it('stops waiting when the run is cancelled, and the channel sees the abort', async () => {
    let seen: RunContext<any> | undefined;
    const ask = askHuman((_question, ctx) => {
      seen = ctx;
      return new Promise<string>(() => {}); // nobody ever answers
    });
    const handle = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('ask_human', { question: 'Hello?' }, 'q'), text('never')]), tools: [ask] }), 'go');
    const events = await collect(handle, (e) => {
      if (e.type === 'tool_call_started') setTimeout(() => handle.cancel('user left'), 0);
    });
    const failed = events.find((e) => e.type === 'run_failed') as { error: Error } | undefined;
    expect(failed?.error).toBeInstanceOf(RunCancelled);
    expect(seen!.signal.aborted).toBe(true);
  });

  it('timeoutMs gives up with a tool timeout', async () => {
    const ask = askHuman(() => new Promise<string>(() => {}), { timeoutMs: 20 });
    const result = await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([call('ask_human', { question: 'Hello?' }, 'q'), text('moved on')]), tools: [ask] }), 'go');
    expect(result.transcript.find((m) => m.role === 'tool')).toMatchObject({ content: "Tool error: tool 'ask_human' timed out after 20 ms", isError: true });
  });
});
