import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, UserError, tool, type CheckpointEntry, type CheckpointHead } from '../src/index.js';
import { ScriptedModel, batch, call, text } from '../src/entry/testing.js';
import { collect, deferred, flush, trace } from './helpers.js';

/** A copy of what the store held at one instant: what a crashed process leaves behind. */
function snapshotOf(store: MemoryCheckpointStore, runId: string): MemoryCheckpointStore {
  const saved = store.load(runId)!;
  const copy = new MemoryCheckpointStore();
  copy.append(runId, saved.entries, saved.head);
  return copy;
}

function seeded(runId: string, entries: CheckpointEntry[], head: Partial<CheckpointHead> = {}): MemoryCheckpointStore {
  const store = new MemoryCheckpointStore();
  store.append(runId, entries, { agent: 'a', turn: 1, usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5, requests: 1 }, status: 'running', ...head });
  return store;
}

describe('resume', () => {
  it('re-runs only calls without a stored result, under the same turn number', async () => {
    const runs: string[] = [];
    const slow = deferred<string>();
    const tools = (hangB: boolean) => [
      tool({ name: 'fast', description: 'd', parameters: z.object({}), execute: (_a, ctx) => { runs.push(ctx.callId); return 'A done'; } }),
      tool({ name: 'slow', description: 'd', parameters: z.object({}), execute: (_a, ctx) => { runs.push(ctx.callId); return hangB ? slow.promise : 'B done'; } }),
    ];
    const store = new MemoryCheckpointStore();
    const first = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([batch([['fast', {}, 'A'], ['slow', {}, 'B']]), text('never')]), tools: tools(true) }), 'go', { checkpoint: { store, runId: 'r1' } });
    const reading = collect(first);
    await flush();
    expect(store.load('r1')!.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'result']);
    const crashed = snapshotOf(store, 'r1');
    first.cancel('test cleanup');
    await reading;

    runs.length = 0;
    const model = new ScriptedModel([text('all done')]);
    const resumed = Runner.stream(new Agent({ name: 'a', model, tools: tools(false) }), 'go', { checkpoint: { store: crashed, runId: 'r1' } });
    const events = await collect(resumed);
    expect(runs).toEqual(['B']);
    expect(trace(events, ['text_delta', 'checkpoint_saved'])).toEqual([
      'run_started',
      'turn_started',
      'tool_call_started:B',
      'tool_call_completed:B',
      'turn_ended',
      'turn_started',
      'message_completed',
      'turn_ended',
      'run_completed',
    ]);
    expect(events.filter((e) => e.type === 'turn_started').map((e) => (e as { turn: number }).turn)).toEqual([1, 2]);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.messages.map((m) => (m.role === 'tool' ? `tool:${m.callId}:${m.content}` : m.role))).toEqual(['user', 'assistant', 'tool:A:A done', 'tool:B:B done']);
    const result = await resumed.result();
    expect(result.output).toBe('all done');
    expect(crashed.load('r1')!.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'result', 'result', 'turn_end', 'reply', 'turn_end']);
    expect(crashed.load('r1')!.head.status).toBe('completed');
  });

  it('replays a completed run as run_started, run_completed without calling the model', async () => {
    const store = new MemoryCheckpointStore();
    await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([text('first answer')]) }), 'hi', { checkpoint: { store, runId: 'done-1' } });
    const model = new ScriptedModel([]);
    const handle = Runner.stream(new Agent({ name: 'a', model }), 'hi', { checkpoint: { store, runId: 'done-1' } });
    const events = await collect(handle);
    expect(trace(events)).toEqual(['run_started', 'run_completed']);
    expect(model.requests).toHaveLength(0);
    expect((await handle.result()).output).toBe('first answer');
  });

  it('starts the turn again when the crash hit before the reply was stored', async () => {
    const store = seeded('r2', [{ kind: 'input', message: { role: 'user', content: 'hello' } }], { turn: 0, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 } });
    const model = new ScriptedModel([text('hi there')]);
    const handle = Runner.stream(new Agent({ name: 'a', model }), 'hello', { checkpoint: { store, runId: 'r2' } });
    const events = await collect(handle);
    expect(trace(events, ['text_delta', 'checkpoint_saved'])).toEqual(['run_started', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    expect(model.requests[0]!.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect((events[1] as { turn: number }).turn).toBe(1);
  });

  it('asks approvals again (decisions are not persisted)', async () => {
    const ran: string[] = [];
    const gated = tool({ name: 'g', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => { ran.push('G'); return 'ok'; } });
    const store = seeded('r3', [
      { kind: 'input', message: { role: 'user', content: 'q' } },
      { kind: 'reply', turn: 1, message: { role: 'assistant', content: '', toolCalls: [{ id: 'G', name: 'g', arguments: '{}' }], agent: 'a' } },
    ]);
    const handle = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([text('done')]), tools: [gated] }), 'q', { checkpoint: { store, runId: 'r3' } });
    const asked: string[] = [];
    await collect(handle, (e) => {
      if (e.type === 'approval_required') {
        asked.push(e.call.id);
        e.approve();
      }
    });
    expect(asked).toEqual(['G']);
    expect(ran).toEqual(['G']);
  });

  it('restores usage and the active agent after a handoff', async () => {
    const b = new Agent({ name: 'b', model: new ScriptedModel([text('from b')]) });
    const a = new Agent({ name: 'a', model: new ScriptedModel([]), handoffs: [b] });
    const store = seeded('r4', [
      { kind: 'input', message: { role: 'user', content: 'q' } },
      { kind: 'reply', turn: 1, message: { role: 'assistant', content: '', toolCalls: [{ id: 'h', name: 'transfer_to_b', arguments: '{}' }], agent: 'a' } },
      { kind: 'result', turn: 1, message: { role: 'tool', callId: 'h', name: 'transfer_to_b', content: 'Transferred to b', isError: false } },
      { kind: 'turn_end', turn: 1 },
    ], { agent: 'b', usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, requests: 1 } });
    const result = await Runner.run(a, 'q', { checkpoint: { store, runId: 'r4' } });
    expect(result.agent).toBe('b');
    expect(result.output).toBe('from b');
    expect(result.turns).toBe(2);
    expect(result.usage.requests).toBe(2);
    expect((b.model as ScriptedModel).requests[0]!.messages).toHaveLength(3);
  });

  it('ifRunExists "fail" refuses an existing run; "restart" starts it over', async () => {
    const store = new MemoryCheckpointStore();
    await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([text('one')]) }), 'hi', { checkpoint: { store, runId: 'x' } });
    const failing = Runner.run(new Agent({ name: 'a', model: new ScriptedModel([text('two')]) }), 'hi', { checkpoint: { store, runId: 'x', ifRunExists: 'fail' } });
    await expect(failing).rejects.toThrow(new UserError(`Run 'x' already exists in the checkpoint store (ifRunExists: "fail").`));
    const restarted = await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([text('three')]) }), 'hi', { checkpoint: { store, runId: 'x', ifRunExists: 'restart' } });
    expect(restarted.output).toBe('three');
    expect(store.load('x')!.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'turn_end']);
  });

  it('records "failed" and "cancelled" in the head', async () => {
    const store = new MemoryCheckpointStore();
    await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([]) }), 'hi', { checkpoint: { store, runId: 'f' } }).catch(() => undefined);
    expect(store.load('f')!.head).toMatchObject({ status: 'failed', error: { name: 'ScriptExhausted' } });

    const gate = deferred<string>();
    const hang = tool({ name: 'hang', description: 'd', parameters: z.object({}), execute: () => gate.promise });
    const handle = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('hang', {}, 'h')]), tools: [hang] }), 'hi', { checkpoint: { store, runId: 'c' } });
    const reading = collect(handle);
    await flush();
    handle.cancel('user left');
    await reading;
    expect(store.load('c')!.head).toMatchObject({ status: 'cancelled', error: { name: 'RunCancelled', message: 'Run cancelled: user left' } });
  });

  it('rejects a log whose result belongs to no stored call with a clear UserError', async () => {
    const store = seeded('bad', [
      { kind: 'input', message: { role: 'user', content: 'q' } },
      { kind: 'result', turn: 1, message: { role: 'tool', callId: 'zz', name: 't', content: 'x', isError: false } },
    ]);
    await expect(Runner.run(new Agent({ name: 'a', model: new ScriptedModel([]) }), 'q', { checkpoint: { store, runId: 'bad' } })).rejects.toThrow(
      "Checkpoint entry 2 is a result for call 'zz', which the stored turn did not request.",
    );
  });
});

describe('sessions', () => {
  it('a second run with the same session continues the conversation; appends are idempotent per run id', async () => {
    const { MemorySession } = await import('../src/store/session.js');
    const session = new MemorySession();
    const first = new ScriptedModel([text('Nice to meet you, Ada.')]);
    await Runner.run(new Agent({ name: 'a', model: first }), 'My name is Ada.', { runId: 'run-1', session: { store: session, id: 's1' } });
    const second = new ScriptedModel([text('You are Ada.')]);
    const handle = Runner.stream(new Agent({ name: 'a', model: second }), 'Who am I?', { runId: 'run-2', session: { store: session, id: 's1' } });
    const events = await collect(handle);
    expect(trace(events, ['text_delta'])).toEqual(['run_started', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    expect(second.requests[0]!.messages.map((m) => `${m.role}: ${'content' in m ? m.content : ''}`)).toEqual([
      'user: My name is Ada.',
      'assistant: Nice to meet you, Ada.',
      'user: Who am I?',
    ]);
    expect((await session.history('s1')).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    // A replayed (resumed, completed) run appends nothing new.
    const store = new MemoryCheckpointStore();
    await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([text('third')]) }), 'again', { runId: 'run-3', session: { store: session, id: 's1' }, checkpoint: { store } });
    await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([]) }), 'again', { runId: 'run-3', session: { store: session, id: 's1' }, checkpoint: { store } });
    expect(await session.history('s1')).toHaveLength(6);
  });
});
