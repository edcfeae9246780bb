import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, tool, type Tool } from '../src/index.js';
import { ScriptedModel, batch, call, text } from '../src/entry/testing.js';
import { collect, completed, trace } from './helpers.js';

describe('checkpoint state', () => {
  it('appends each entry as it happens (input, reply, every result, turn end) and reports checkpoint_saved', async () => {
    const store = new MemoryCheckpointStore();
    const echo = tool({ name: 'echo', description: 'd', parameters: z.object({}), execute: () => 'e' });
    const model = new ScriptedModel([batch([['echo', {}, 'a'], ['echo', {}, 'b']]), text('done')]);
    const events = await collect(Runner.stream(new Agent({ name: 'x', model, tools: [echo] }), 'q', { checkpoint: { store, runId: 'cp-1' } }));
    // Entries are written at the end of each step, together (group commit): the input with the
    // first model request, the reply before the tools' code runs, both results with the turn end.
    expect(trace(events)).toEqual([
      'run_started',
      'turn_started',
      'checkpoint_saved',
      'message_completed',
      'tool_call_started:a',
      'tool_call_started:b',
      'checkpoint_saved',
      'tool_call_completed:a',
      'tool_call_completed:b',
      'checkpoint_saved',
      'turn_ended',
      'turn_started',
      'message_completed',
      'checkpoint_saved',
      'turn_ended',
      'run_completed',
    ]);
    expect(events.filter((e) => e.type === 'checkpoint_saved').map((e) => (e as { entries: number }).entries)).toEqual([1, 1, 3, 2]);
    const saved = store.load('cp-1')!;
    expect(saved.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'result', 'result', 'turn_end', 'reply', 'turn_end']);
    expect(saved.head).toMatchObject({ agent: 'x', turn: 2, status: 'completed', output: 'done' });
  });

  it('a failing store write ends the run with a clear error', async () => {
    const store = { append: () => Promise.reject(new Error('disk full')), load: () => undefined };
    const model = new ScriptedModel([text('done')]);
    await expect(Runner.run(new Agent({ name: 'x', model }), 'q', { checkpoint: { store } })).rejects.toThrow('checkpoint write failed: disk full');
  });
});

describe('handoff barrier hook', () => {
  it('runs handoff tools alone and lets only the first handoff of a turn through', async () => {
    const order: string[] = [];
    const base = (name: string) =>
      tool({ name, description: 'd', parameters: z.object({}), execute: async (_a, ctx) => { order.push(`run ${ctx.callId}`); return `Transferred to ${name}`; } });
    const toB: Tool = { ...base('transfer_to_b'), handoff: { targetName: 'b' }, source: 'handoffs' };
    const toC: Tool = { ...base('transfer_to_c'), handoff: { targetName: 'c' }, source: 'handoffs' };
    const work = base('work');
    const model = new ScriptedModel([batch([['work', {}, 'w1'], ['transfer_to_b', {}, 'h1'], ['transfer_to_c', {}, 'h2'], ['work', {}, 'w2']]), text('done')]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: [work], handoffs: [toB, toC] }), 'q'));
    expect(order).toEqual(['run w1', 'run h1', 'run w2']);
    expect(completed(events).map((e) => [e.call.id, e.output])).toEqual([
      ['w1', 'Transferred to work'],
      ['h1', 'Transferred to transfer_to_b'],
      ['h2', "Handoff not performed: this turn already transferred to 'b'. Only the first handoff in a turn takes effect."],
      ['w2', 'Transferred to work'],
    ]);
  });

  it('reports a handoff name clash with its source', async () => {
    const t = tool({ name: 'transfer_to_b', description: 'd', parameters: z.object({}), execute: () => 1 });
    const h: Tool = { ...t, handoff: { targetName: 'b' }, source: 'handoffs' };
    const model = new ScriptedModel([text('x')]);
    await expect(Runner.run(new Agent({ name: 'a', model, tools: [t], handoffs: [h] }), 'q')).rejects.toThrow("Tool name conflict for 'transfer_to_b' from handoffs (also from agent tools).");
  });
});

describe('scripted model', () => {
  it('builds calls with explicit ids, raw argument text, and records requests', async () => {
    expect(call('add', { a: 1 }, 'c9').calls).toEqual([{ id: 'c9', name: 'add', arguments: '{"a":1}' }]);
    expect(call('add', '{oops', 'c8').calls[0]!.arguments).toBe('{oops');
    expect(batch([call('a', {}, '1'), ['b', { x: 1 }, '2']]).calls.map((c) => c.id)).toEqual(['1', '2']);
    const model = new ScriptedModel([text('hello world')]);
    const events = await collect(Runner.stream(new Agent({ name: 'x', model }), 'hi'));
    expect(events.filter((e) => e.type === 'text_delta').map((e) => (e as { delta: string }).delta)).toEqual(['hello ', 'world']);
    expect(model.requests[0]!.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(model.remaining).toBe(0);
  });
});
