import { describe, expect, it } from 'vitest';
import { Agent, MemoryCheckpointStore, MemorySession, Runner, type CheckpointEntry, type Message, type RunEvent, type Session } from '../../src/index.js';
import { ScriptedModel, text } from '../../src/entry/testing.js';
import { collect, trace } from '../helpers.js';

const usage = { inputTokens: 3, outputTokens: 2, totalTokens: 5, requests: 1 };

function seeded(runId: string, entries: CheckpointEntry[], agent = 'a'): MemoryCheckpointStore {
  const store = new MemoryCheckpointStore();
  store.append(runId, entries, { agent, turn: 1, usage, status: 'running' });
  return store;
}

const crashedTurn: CheckpointEntry[] = [
  { kind: 'input', message: { role: 'user', content: 'go' } },
  { kind: 'reply', turn: 1, message: { role: 'assistant', content: '', agent: 'a', toolCalls: [{ id: 'c1', name: 'work', arguments: '{}' }] } },
];

/** Runs `agent` on the store and returns the events and the failure message. */
async function refused(store: MemoryCheckpointStore, runId: string, ifRunExists: 'resume' | 'fail' | 'resume_only', agent = new Agent({ name: 'a', model: new ScriptedModel([]) })) {
  const before = structuredClone(store.load(runId));
  const events = await collect(Runner.stream(agent, 'go', { checkpoint: { store, runId, ifRunExists } }));
  expect(trace(events)).toEqual(['run_started', 'run_failed']);
  // Refused or failed: the stored run (entries, head, lease) is exactly as before.
  expect(store.load(runId)).toEqual(before);
  const failed = events[1] as Extract<RunEvent, { type: 'run_failed' }>;
  return { name: failed.error.name, message: failed.error.message };
}

describe('durable refusals write nothing and stream run_started, run_failed', () => {
  it('ifRunExists "fail" on a completed run keeps its head; a later resume replays it without the model', async () => {
    const store = new MemoryCheckpointStore();
    await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([text('first answer')]) }), 'go', { checkpoint: { store, runId: 'done' } });
    expect(await refused(store, 'done', 'fail')).toEqual({ name: 'UserError', message: `Run 'done' already exists in the checkpoint store (ifRunExists: "fail").` });
    expect(store.load('done')!.head).toMatchObject({ status: 'completed', output: 'first answer', turn: 1 });
    const replay = await Runner.resume(new Agent({ name: 'a', model: new ScriptedModel([]) }), { store, runId: 'done' }).result();
    expect(replay).toMatchObject({ output: 'first answer', turns: 1 });
  });

  it('a failed restore (a result for a call the turn did not request) writes nothing', async () => {
    const store = seeded('damaged', [...crashedTurn, { kind: 'result', turn: 1, message: { role: 'tool', callId: 'zz', name: 'work', content: 'x', isError: false } }]);
    expect(await refused(store, 'damaged', 'resume')).toEqual({ name: 'UserError', message: "Checkpoint entry 3 is a result for call 'zz', which the stored turn did not request." });
  });

  it('a stored agent that is not reachable through handoffs writes nothing', async () => {
    const store = seeded('ghost', crashedTurn, 'ghost');
    expect(await refused(store, 'ghost', 'resume')).toEqual({ name: 'UserError', message: "Cannot resume run 'ghost': agent 'ghost' is not reachable from 'a' through handoffs." });
  });

  it('resume_only with no stored run writes nothing', async () => {
    const store = new MemoryCheckpointStore();
    expect(await refused(store, 'nobody', 'resume_only')).toEqual({ name: 'UserError', message: `Run 'nobody' is not in the checkpoint store (ifRunExists: "resume_only").` });
    expect(store.load('nobody')).toBeUndefined();
    expect(store.list()).toEqual([]);
  });

  it('restart clears a damaged run and runs it fresh', async () => {
    const store = seeded('again', [...crashedTurn, { kind: 'result', turn: 1, message: { role: 'tool', callId: 'zz', name: 'work', content: 'x', isError: false } }]);
    const model = new ScriptedModel([text('fresh')]);
    const result = await Runner.run(new Agent({ name: 'a', model }), 'anew', { checkpoint: { store, runId: 'again', ifRunExists: 'restart' } });
    expect(result.output).toBe('fresh');
    expect(model.requests.map((r) => r.messages)).toEqual([[{ role: 'user', content: 'anew' }]]);
    const saved = store.load('again')!;
    expect(saved.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'turn_end']);
    expect(saved.head).toMatchObject({ status: 'completed', output: 'fresh', turn: 1 });
    expect(saved.lease).toBeUndefined();
  });
});

/** A real MemorySession whose first `failures` appends throw; every append is counted. */
class FlakySession implements Session {
  readonly appends: string[] = [];
  constructor(
    private readonly inner: MemorySession,
    private failures: number,
  ) {}
  append(sessionId: string, runId: string, messages: readonly Message[]): boolean {
    this.appends.push(runId);
    if (this.failures > 0) {
      this.failures--;
      throw new Error('session disk full');
    }
    return this.inner.append(sessionId, runId, messages);
  }
  history(sessionId: string): Message[] {
    return this.inner.history(sessionId);
  }
  clear(sessionId: string): void {
    this.inner.clear(sessionId);
  }
}

describe('a failed session append', () => {
  it('leaves the run completed; a later replay retries the append exactly once, without the model', async () => {
    const store = new MemoryCheckpointStore();
    const inner = new MemorySession();
    const session = new FlakySession(inner, 1);
    const options = { checkpoint: { store, runId: 'chat-1' }, session: { store: session, id: 's' } };
    const first = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([text('hello there')]) }), 'hi', options);
    const events = await collect(first);
    expect(trace(events, ['text_delta', 'checkpoint_saved'])).toEqual(['run_started', 'turn_started', 'message_completed', 'turn_ended', 'run_failed']);
    await expect(first.result()).rejects.toThrow('session disk full');
    expect(session.appends).toEqual(['chat-1']);
    const stored = structuredClone(store.load('chat-1')!);
    expect(stored.head).toMatchObject({ status: 'completed', output: 'hello there', turn: 1 });
    expect(inner.history('s')).toEqual([]);

    const model = new ScriptedModel([]);
    const replay = await Runner.run(new Agent({ name: 'a', model }), 'hi', options);
    expect(replay).toMatchObject({ output: 'hello there', turns: 1 });
    expect(model.requests).toEqual([]);
    expect(session.appends).toEqual(['chat-1', 'chat-1']);
    expect(inner.history('s')).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello there', toolCalls: [], agent: 'a' },
    ]);
    expect(store.load('chat-1')).toEqual(stored);
  });
});
