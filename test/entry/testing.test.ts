import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { Agent, Runner, ScriptExhausted, tool, type RunEvent } from '../../src/index.js';

const add = tool({ name: 'add', description: 'Add.', parameters: z.object({ a: z.number(), b: z.number() }), execute: async ({ a, b }) => a + b });
const calc = (model: ScriptedModel) => new Agent({ name: 'calc', model, tools: [add] });

// Any unhandled rejection during a test is a failure of that test.
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await new Promise((resolve) => setTimeout(resolve, 10));
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

describe('ScriptedModel: one script, any number of runs', () => {
  it('replays the script from the start for every run: Runner.run, then Runner.stream, then both at once', async () => {
    const model = new ScriptedModel([call('add', { a: 2, b: 3 }, 'c1'), text('2 + 3 = 5')]);
    const agent = calc(model);
    expect((await Runner.run(agent, 'What is 2 + 3?')).output).toBe('2 + 3 = 5');
    const handle = Runner.stream(agent, 'What is 2 + 3?');
    const outputs: string[] = [];
    for await (const event of handle) if (event.type === 'tool_call_completed') outputs.push(`${event.call.id}=${event.output}`);
    expect(outputs).toEqual(['c1=5']);
    expect((await handle.result()).output).toBe('2 + 3 = 5');
    // Interleaved runs keep separate cursors.
    const both = await Promise.all([Runner.run(agent, 'a'), Runner.run(agent, 'b')]);
    expect(both.map((r) => r.output)).toEqual(['2 + 3 = 5', '2 + 3 = 5']);
    // Transcript lengths per request: each run starts from its own first message.
    const lengths = model.requests.map((r) => r.messages.length);
    expect(lengths.slice(0, 4)).toEqual([1, 3, 1, 3]);
    expect(lengths.slice(4).sort()).toEqual([1, 1, 3, 3]); // the two concurrent runs, in either order
    expect(model.remaining).toBe(0);
  });

  it('keeps one cursor across a handoff (the same run) when both agents share the model', async () => {
    const model = new ScriptedModel([call('transfer_to_b', {}, 'h1'), text('b answers')]);
    const b = new Agent({ name: 'b', model });
    const a = new Agent({ name: 'a', model, handoffs: [b] });
    expect((await Runner.run(a, 'hi')).output).toBe('b answers');
  });
});

describe('ScriptedModel: running out', () => {
  it('fails Runner.run with ScriptExhausted', async () => {
    const error = await Runner.run(calc(new ScriptedModel([call('add', { a: 1, b: 1 }, 'c1')])), 'go').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScriptExhausted);
    expect((error as Error).message).toBe('ScriptedModel has no reply for request 2: the script has 1 step.');
  });

  it('ends a stream with run_failed(ScriptExhausted) even when result() is never called', async () => {
    const handle = Runner.stream(calc(new ScriptedModel([])), 'go');
    const events: RunEvent[] = [];
    for await (const event of handle) events.push(event);
    expect(events.map((e) => e.type)).toEqual(['run_started', 'turn_started', 'run_failed']);
    const failed = events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>;
    expect(failed.error).toBeInstanceOf(ScriptExhausted);
    expect(failed.error.message).toBe('ScriptedModel has no reply for request 1: the script has 0 steps.');
  });
});
