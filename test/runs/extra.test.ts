/**
 * `ctx.extra` (issue 29, item 6; CubePi's ctx.extra): one JSON object per run, shared by its
 * tools and hooks, stored in the log when it changes, restored on resume (crash: test/crash/extra.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, MemorySession, Runner, tool, waitForEvent } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';

const note = tool({
  name: 'note',
  description: 'Adds a note to ctx.extra.',
  parameters: z.object({ text: z.string() }),
  execute: ({ text: t }, ctx) => {
    ctx.extra['notes'] = [...((ctx.extra['notes'] as string[] | undefined) ?? []), t];
    return 'noted';
  },
});

describe('ctx.extra', () => {
  it('is one object for the tools and hooks of a run, starting from RunOptions.extra; a sub-run has its own', async () => {
    const seen: unknown[] = [];
    const child = new Agent({ name: 'child', model: new ScriptedModel([call('note', { text: 'in child' }), text('child done')]), tools: [note] });
    const agent = new Agent({
      name: 'main',
      model: new ScriptedModel([call('note', { text: 'a' }), call('ask_child', { input: 'go' }), text('done')]),
      tools: [note, child.asTool({ name: 'ask_child', description: 'd' })],
      hooks: {
        afterToolCall: (_call, _result, ctx) => void seen.push(structuredClone(ctx.extra)),
        onRunEnd: (_result, ctx) => void seen.push(structuredClone(ctx.extra)),
      },
    });
    await Runner.run(agent, 'go', { extra: { user: 'ada' } });
    expect(seen).toEqual([
      { user: 'ada', notes: ['a'] },
      { user: 'ada', notes: ['a'] },
      { user: 'ada', notes: ['a'] },
    ]);
  });

  it('survives a park and a resume; the options value loses to the stored one', async () => {
    const store = new MemoryCheckpointStore();
    const pay = tool({ name: 'pay', description: 'd', parameters: z.object({}), execute: (_a, ctx) => ((ctx.extra['paying'] = true), waitForEvent('paid')) });
    const seen: unknown[] = [];
    const check = tool({ name: 'check', description: 'd', parameters: z.object({}), execute: (_a, ctx) => (seen.push({ ...ctx.extra }), 'ok') });
    const agent = (model: ScriptedModel) => new Agent({ name: 'a', model, tools: [note, pay, check] });
    await Runner.stream(agent(new ScriptedModel([call('note', { text: 'x' }), call('pay', {})])), 'go', { checkpoint: { store, runId: 'e1', suspendOnWait: true }, extra: { v: 1 } }).result().catch(() => undefined);
    expect(store.load('e1')!.head.status).toBe('suspended');
    expect(store.load('e1')!.entries.filter((e) => e.kind === 'extra').at(-1)).toEqual({ kind: 'extra', value: { v: 1, notes: ['x'], paying: true } });
    await Runner.signal(store, 'e1', 'paid', 'ok');
    await Runner.resume(agent(new ScriptedModel([call('check', {}), text('done')])), { store, runId: 'e1' }, { extra: { v: 2 } }).result();
    expect(seen).toEqual([{ v: 1, notes: ['x'], paying: true }]);
  });

  it("a session's next run starts with the extra its last run ended with; RunOptions.extra's keys go over it", async () => {
    const session = new MemorySession();
    const seen: unknown[] = [];
    const look = tool({ name: 'look', description: 'd', parameters: z.object({}), execute: (_a, ctx) => (seen.push(structuredClone(ctx.extra)), 'ok') });
    const agent = (model: ScriptedModel) => new Agent({ name: 'a', model, tools: [note, look] });
    const first = await Runner.run(agent(new ScriptedModel([call('note', { text: 'a' }), text('one')])), 'go', { session: { store: session, id: 's' }, extra: { user: 'ada' } });
    const secondModel = new ScriptedModel([call('look', {}), call('note', { text: 'b' }), text('two')]);
    const second = await Runner.run(agent(secondModel), 'again', { session: { store: session, id: 's' } });
    await Runner.run(agent(new ScriptedModel([call('look', {}), text('three')])), 'once more', { session: { store: session, id: 's' }, extra: { user: 'bob', plan: 'pro' } });
    expect(seen).toEqual([
      { user: 'ada', notes: ['a'] },
      { user: 'bob', plan: 'pro', notes: ['a', 'b'] },
    ]);
    // It travels as the last message of each stored run; it never joins a transcript or a request.
    const history = session.history('s');
    expect(history.filter((m) => (m.role as string) === 'troupe.extra')).toEqual([
      { role: 'troupe.extra', content: '', data: { user: 'ada', notes: ['a'] } },
      { role: 'troupe.extra', content: '', data: { user: 'ada', notes: ['a', 'b'] } },
      { role: 'troupe.extra', content: '', data: { user: 'bob', plan: 'pro', notes: ['a', 'b'] } },
    ]);
    expect(first.transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(second.transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect(secondModel.requests[0]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    // A run of the session that never touches extra hands it on unchanged.
    await Runner.run(agent(new ScriptedModel([text('four')])), 'bye', { session: { store: session, id: 's' } });
    expect(session.history('s').at(-1)).toEqual({ role: 'troupe.extra', content: '', data: { user: 'bob', plan: 'pro', notes: ['a', 'b'] } });
  });

  it('a value JSON cannot write fails a durable run with a UserError; a bad option fails it at start', async () => {
    const bad = tool({ name: 'bad', description: 'd', parameters: z.object({}), execute: (_a, ctx) => ((ctx.extra['n'] = 1n), 'ok') });
    const failed = await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([call('bad', {}), text('x')]), tools: [bad] }), 'go', { checkpoint: { store: new MemoryCheckpointStore(), runId: 'e2' } }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ name: 'UserError', message: 'ctx.extra cannot be written as JSON: Do not know how to serialize a BigInt.' });
    const refused = await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([text('x')]) }), 'go', { extra: [1] as unknown as Record<string, unknown> }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'UserError', message: 'extra must be a plain object (JSON), got an array.' });
  });
});
