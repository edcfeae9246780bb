import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, tool, toolResult, type RunEvent } from '../src/index.js';
import { ScriptedModel, batch, call, text } from '../src/entry/testing.js';
import { collect, completed, deferred, flush, trace, type Deferred } from './helpers.js';

/** What this Node's JSON.parse says about `text` (Node 24 adds the line and column to Node 20's message). */
function jsonParseMessage(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${text} is valid JSON`);
}

/** Tools whose bodies wait for the test to release them, recording start/end order. */
function gatedTools() {
  const log: string[] = [];
  const gates = new Map<string, Deferred<string>>();
  const gate = (id: string) => {
    let d = gates.get(id);
    if (!d) gates.set(id, (d = deferred<string>()));
    return d;
  };
  const make = (name: string, options: { parallel?: boolean; executionMode?: 'parallel' | 'sequential' } = {}) =>
    tool({
      name,
      description: name,
      parameters: z.object({}),
      ...options,
      execute: async (_args, ctx) => {
        log.push(`start ${ctx.callId}`);
        const value = await gate(ctx.callId).promise;
        log.push(`end ${ctx.callId}`);
        return value;
      },
    });
  return { log, gate, make };
}

describe('preflight rejections', () => {
  it('rejects unknown tools, bad JSON, non-object and invalid arguments without tool_call_started', async () => {
    const add = tool({ name: 'add', description: 'd', parameters: z.object({ a: z.number() }), execute: ({ a }) => a });
    const model = new ScriptedModel([
      batch([
        ['nope', {}, 'u1'],
        ['add', '{"a": 1', 'j1'],
        ['add', '[1,2]', 'o1'],
        ['add', { a: 'x' }, 'v1'],
        ['add', '', 'e1'],
        ['add', { a: '7' }, 'ok'],
      ]),
      text('done'),
    ]);
    const handle = Runner.stream(new Agent({ name: 'a', model, tools: [add] }), 'q');
    const events = await collect(handle);
    expect(trace(events)).toEqual([
      'run_started',
      'turn_started',
      'message_completed',
      'tool_call_completed:u1',
      'tool_call_completed:j1',
      'tool_call_completed:o1',
      'tool_call_completed:v1',
      'tool_call_completed:e1',
      'tool_call_started:ok',
      'tool_call_completed:ok',
      'turn_ended',
      'turn_started',
      'message_completed',
      'turn_ended',
      'run_completed',
    ]);
    expect(completed(events).map((e) => [e.call.id, e.isError, e.output])).toEqual([
      ['u1', true, "Tool error: unknown tool 'nope'. Available tools: add."],
      ['j1', true, `Tool error: arguments for tool 'add' are not valid JSON: ${jsonParseMessage('{"a": 1')}`],
      ['o1', true, "Tool error: arguments for tool 'add' must be a JSON object, got an array."],
      ['v1', true, "Tool error: Invalid arguments for tool 'add': a: Invalid input: expected number, received string"],
      ['e1', true, "Tool error: Invalid arguments for tool 'add': a: Invalid input: expected number, received undefined"],
      ['ok', false, '7'],
    ]);
    // The model sees one result per call, paired by id.
    expect(model.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => (m as { callId: string }).callId)).toEqual(['u1', 'j1', 'o1', 'v1', 'e1', 'ok']);
  });
});

describe('dispatch', () => {
  it('runs calls in parallel by default and records results in completion order', async () => {
    const { log, gate, make } = gatedTools();
    const slow = make('slow');
    const model = new ScriptedModel([batch([['slow', {}, 'a'], ['slow', {}, 'b'], ['slow', {}, 'c']]), text('done')]);
    const handle = Runner.stream(new Agent({ name: 'p', model, tools: [slow] }), 'q');
    const eventsP = collect(handle);
    await flush();
    expect(log).toEqual(['start a', 'start b', 'start c']);
    gate('c').resolve('C');
    await flush();
    gate('a').resolve('A');
    await flush();
    gate('b').resolve('B');
    const events = await eventsP;
    expect(log).toEqual(['start a', 'start b', 'start c', 'end c', 'end a', 'end b']);
    expect(completed(events).map((e) => e.call.id)).toEqual(['c', 'a', 'b']);
    expect(model.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['C', 'A', 'B']);
  });

  it('makes a parallel:false call a barrier: waits for in-flight calls, runs alone, then continues', async () => {
    const { log, gate, make } = gatedTools();
    const p = make('p');
    const barrier = make('migrate', { parallel: false });
    const model = new ScriptedModel([batch([['p', {}, 'p1'], ['p', {}, 'p2'], ['migrate', {}, 'm'], ['p', {}, 'p3']]), text('done')]);
    const eventsP = collect(Runner.stream(new Agent({ name: 'b', model, tools: [p, barrier] }), 'q'));
    await flush();
    expect(log).toEqual(['start p1', 'start p2']);
    gate('p2').resolve('2');
    await flush();
    expect(log).toEqual(['start p1', 'start p2', 'end p2']);
    gate('p1').resolve('1');
    await flush();
    expect(log).toEqual(['start p1', 'start p2', 'end p2', 'end p1', 'start m']);
    gate('m').resolve('M');
    await flush();
    expect(log.slice(-2)).toEqual(['end m', 'start p3']);
    gate('p3').resolve('3');
    const events = await eventsP;
    expect(trace(events).filter((t) => t.startsWith('tool_call'))).toEqual([
      'tool_call_started:p1',
      'tool_call_started:p2',
      'tool_call_completed:p2',
      'tool_call_completed:p1',
      'tool_call_started:m',
      'tool_call_completed:m',
      'tool_call_started:p3',
      'tool_call_completed:p3',
    ]);
  });

  it('runs the whole batch sequentially when any tool in it has executionMode "sequential"', async () => {
    const { log, gate, make } = gatedTools();
    const p = make('p');
    const seq = make('seq', { executionMode: 'sequential' });
    const model = new ScriptedModel([batch([['p', {}, 'a'], ['seq', {}, 'b'], ['p', {}, 'c']]), batch([['p', {}, 'd'], ['p', {}, 'e']]), text('done')]);
    const eventsP = collect(Runner.stream(new Agent({ name: 's', model, tools: [p, seq] }), 'q'));
    for (const id of ['a', 'b', 'c']) {
      await flush();
      expect(log.at(-1)).toBe(`start ${id}`);
      gate(id).resolve(id);
    }
    await flush();
    // The next batch has no sequential tool, so it runs in parallel again.
    expect(log.slice(-2)).toEqual(['start d', 'start e']);
    gate('d').resolve('d');
    gate('e').resolve('e');
    await eventsP;
    expect(log.slice(0, 6)).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('runs every batch sequentially with agent toolExecution "sequential"', async () => {
    const { log, gate, make } = gatedTools();
    const p = make('p');
    const model = new ScriptedModel([batch([['p', {}, 'a'], ['p', {}, 'b']]), text('done')]);
    const eventsP = collect(Runner.stream(new Agent({ name: 's', model, tools: [p], toolExecution: 'sequential' }), 'q'));
    await flush();
    expect(log).toEqual(['start a']);
    gate('a').resolve('a');
    await flush();
    expect(log).toEqual(['start a', 'end a', 'start b']);
    gate('b').resolve('b');
    await eventsP;
  });

  it('emits tool_call_progress from ctx.onUpdate, never shown to the model', async () => {
    const slow = tool({
      name: 'slow',
      description: 'd',
      parameters: z.object({}),
      execute: (_a, ctx) => {
        ctx.onUpdate({ step: 1 });
        ctx.onUpdate({ step: 2 });
        return 'finished';
      },
    });
    const model = new ScriptedModel([call('slow', {}, 's1'), text('ok')]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: [slow] }), 'q'));
    expect(trace(events).filter((t) => t.includes(':s1'))).toEqual(['tool_call_started:s1', 'tool_call_progress:s1', 'tool_call_progress:s1', 'tool_call_completed:s1']);
    expect(events.filter((e) => e.type === 'tool_call_progress').map((e) => (e as { progress: unknown }).progress)).toEqual([{ step: 1 }, { step: 2 }]);
    expect(JSON.stringify(model.requests[1]!.messages)).not.toContain('step');
  });

  it('completes without another model call when every result of the batch terminates', async () => {
    const submit = tool({ name: 'submit', description: 'd', parameters: z.object({ answer: z.string() }), execute: ({ answer }) => toolResult({ content: `submitted ${answer}`, terminate: true, details: { saved: true } }) });
    const model = new ScriptedModel([batch([['submit', { answer: 'x' }, 's1'], ['submit', { answer: 'y' }, 's2']]), text('never')]);
    const handle = Runner.stream(new Agent({ name: 'a', model, tools: [submit] }), 'q');
    const events = await collect(handle);
    expect(trace(events).slice(-2)).toEqual(['turn_ended', 'run_completed']);
    expect(model.requests).toHaveLength(1);
    expect((await handle.result()).output).toBe('submitted x\nsubmitted y');
    expect(completed(events)[0]).toMatchObject({ details: { saved: true }, terminate: true, result: 'submitted x' });
  });

  it('does not terminate when only part of the batch terminates', async () => {
    const submit = tool({ name: 'submit', description: 'd', parameters: z.object({}), execute: () => toolResult({ content: 'x', terminate: true }) });
    const other = tool({ name: 'other', description: 'd', parameters: z.object({}), execute: () => 'y' });
    const model = new ScriptedModel([batch([['submit', {}, 's1'], ['other', {}, 'o1']]), text('final')]);
    const result = await Runner.run(new Agent({ name: 'a', model, tools: [submit, other] }), 'q');
    expect(result.output).toBe('final');
    expect(model.requests).toHaveLength(2);
  });
});
