/**
 * The durable log's writer (issue "Durable runs you can trust", items 2, 4, 7, 8): leases and
 * fencing, a failing store stopping the run at once, injected messages stored before the
 * model sees them, and appends of one step sharing a transaction.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, RunLocked, Runner, tool, type CheckpointStore, type Model, type ModelRequest, type ModelStreamPart } from '../../src/index.js';
import { ScriptedModel, batch, text } from '../../src/entry/testing.js';
import { SqliteCheckpointStore } from '../../src/entry/sqlite.js';
import { collect, deferred, flush, trace } from '../helpers.js';

const echo = tool({ name: 'echo', description: 'd', parameters: z.object({}), execute: () => 'e' });

describe('leases and fencing', () => {
  it('a second handle on a live run gets RunLocked naming the run and owner, and writes nothing', async () => {
    const store = new MemoryCheckpointStore();
    const gate = deferred<string>();
    const wait = tool({ name: 'wait', description: 'd', parameters: z.object({}), execute: () => gate.promise });
    const agent = (model: Model) => new Agent({ name: 'a', model, tools: [wait] });
    const first = Runner.stream(agent(new ScriptedModel([batch([['wait', {}, 'w1']]), text('done')])), 'go', { checkpoint: { store, runId: 'r', owner: 'node-1' } });
    const reading = collect(first);
    await flush();
    const before = store.load('r');
    const second = Runner.stream(agent(new ScriptedModel([text('never')])), 'go', { checkpoint: { store, runId: 'r', owner: 'node-2' } });
    const events = await collect(second);
    expect(trace(events)).toEqual(['run_started', 'run_failed']);
    const error = (events[1] as { error: Error }).error;
    expect(error).toBeInstanceOf(RunLocked);
    expect(error.message).toMatch(/^Run 'r' is locked by 'node-1' until .+Z; nothing was written\. Wait for the lease to expire or stop the other process\.$/);
    expect(store.load('r')).toEqual(before);
    gate.resolve('ok');
    expect((await first.result()).output).toBe('done');
    await reading;
    expect(store.load('r')!.lease).toBeUndefined();
  });

  it('same-tick starts with ifRunExists "fail": exactly one runs', async () => {
    const store = new MemoryCheckpointStore();
    const agent = new Agent({ name: 'a', model: new ScriptedModel([text('one'), text('two')]) });
    const a = Runner.stream(agent, 'go', { checkpoint: { store, runId: 'same', ifRunExists: 'fail' } });
    const b = Runner.stream(agent, 'go', { checkpoint: { store, runId: 'same', ifRunExists: 'fail' } });
    const outcomes = await Promise.allSettled([a.result(), b.result()]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(RunLocked);
    expect(store.load('same')!.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'turn_end']);
  });

  it('a run whose lease was taken over fails at its next write with RunLocked; its running call is aborted', async () => {
    let now = 1_000;
    const store = new MemoryCheckpointStore({ now: () => now });
    const seen: string[] = [];
    const slow = tool({
      name: 'slow',
      description: 'd',
      parameters: z.object({}),
      execute: (_a, ctx) =>
        new Promise<string>((resolve) => {
          const stop = (): void => (seen.push('aborted'), resolve('late'));
          if (ctx.signal.aborted) stop();
          else ctx.signal.addEventListener('abort', stop);
          // While this call runs, the lease runs out and another owner takes the run. (A call whose
          // run stopped before its code started never starts: tool-call.ts.)
          now += 120_000;
          store.claim('taken', 'new', 60_000);
        }),
    });
    const agent = new Agent({ name: 'a', model: new ScriptedModel([batch([['echo', {}, 'e1'], ['slow', {}, 's1']])]), tools: [echo, slow] });
    const handle = Runner.stream(agent, 'go', { checkpoint: { store, runId: 'taken', owner: 'old', leaseMs: 60_000 } });
    const events: string[] = [];
    const reading = collect(handle, (e) => {
      events.push(e.type);
    });
    const error = await handle.result().catch((e: unknown) => e);
    await reading;
    expect(error).toBeInstanceOf(RunLocked);
    expect((error as Error).message).toMatch(/^Run 'taken' is locked by 'new' until /);
    expect(seen).toEqual(['aborted']);
    // The old owner's results never reached the log (its reply may or may not have been stored before the takeover).
    expect(store.load('taken')!.entries.filter((e) => e.kind === 'result')).toEqual([]);
    expect(store.load('taken')!.head.status).toBe('running');
    expect(store.load('taken')!.lease?.owner).toBe('new');
  });
});

describe('store failures', () => {
  it('a failing write during a batch aborts the running calls and fails the run at once with the store error', async () => {
    const inner = new MemoryCheckpointStore();
    let writes = 0;
    const store: CheckpointStore = {
      load: (id) => inner.load(id),
      append: (id, entries, head, fence) => {
        if (++writes === 3) throw new Error('disk full');
        inner.append(id, entries, head, fence);
      },
      claim: (id, owner, ms) => inner.claim(id, owner, ms),
      renew: (id, owner, ms) => inner.renew(id, owner, ms),
      release: (id, owner) => inner.release(id, owner),
    };
    const aborted: string[] = [];
    const never = tool({
      name: 'never',
      description: 'd',
      parameters: z.object({}),
      execute: (_a, ctx) => new Promise<string>((_resolve, reject) => ctx.signal.addEventListener('abort', () => (aborted.push(ctx.callId), reject(new Error('aborted'))))),
    });
    const agent = new Agent({ name: 'a', model: new ScriptedModel([batch([['echo', {}, 'e1'], ['never', {}, 'n1']])]), tools: [echo, never] });
    const events = await collect(Runner.stream(agent, 'go', { checkpoint: { store, runId: 'f' } }));
    expect(trace(events)).toEqual([
      'run_started',
      'turn_started',
      'checkpoint_saved',
      'message_completed',
      'tool_call_started:e1',
      'tool_call_started:n1',
      'checkpoint_saved',
      'tool_call_completed:e1',
      'tool_call_completed:n1',
      'run_failed',
    ]);
    expect((events.at(-1) as { error: Error }).error.message).toBe('checkpoint write failed: disk full');
    expect(aborted).toEqual(['n1']);
    expect(events.filter((e) => e.type === 'tool_call_completed').map((e) => (e as { output: string }).output)).toEqual([
      'e',
      "Tool error: not executed: the run's checkpoint store failed: checkpoint write failed: disk full",
    ]);
  });
});

/** A model that records, at each request, which user messages the store already holds. */
class StoreWatchingModel implements Model {
  readonly name = 'watcher';
  readonly storedAtRequest: string[][] = [];
  private turn = 0;
  constructor(private readonly store: MemoryCheckpointStore) {}
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    this.storedAtRequest.push((this.store.load(request.runId ?? '')?.entries ?? []).flatMap((e) => (e.kind === 'input' ? [(e.message as { content: string }).content] : [])));
    if (this.turn++ === 0) yield { type: 'tool_call', call: { id: 'p1', name: 'post', arguments: '{}' } };
    else yield { type: 'text_delta', delta: 'done' };
    yield { type: 'finish', usage: { inputTokens: 1, outputTokens: 1 } };
  }
}

describe('injected messages are stored before the model sees them', () => {
  it('with an async store, a mailbox post is in the log when the next request is sent', async () => {
    const inner = new MemoryCheckpointStore();
    const slowStore: CheckpointStore = {
      load: (id) => inner.load(id),
      append: (id, entries, head, fence) => new Promise<void>((resolve) => setTimeout(() => (inner.append(id, entries, head, fence), resolve()), 5)),
    };
    const post = tool({ name: 'post', description: 'd', parameters: z.object({}), execute: (_a, ctx) => (ctx.mailbox.post('note for the model'), 'posted') });
    const model = new StoreWatchingModel(inner);
    const result = await Runner.run(new Agent({ name: 'a', model, tools: [post] }), 'go', { checkpoint: { store: slowStore, runId: 'm' } });
    expect(result.output).toBe('done');
    expect(model.storedAtRequest).toEqual([['go'], ['go', 'note for the model']]);
    expect(inner.load('m')!.entries.find((e) => e.kind === 'input' && e.source === 'mailbox')).toEqual({ kind: 'input', source: 'mailbox', message: { role: 'user', content: 'note for the model' } });
  });
});

describe('group commit on SQLite', () => {
  it('appends of runs writing in the same step share one transaction; each run gets its own entries', async () => {
    const store = new SqliteCheckpointStore(':memory:');
    const batches: number[] = [];
    const appendBatch = store.appendBatch.bind(store);
    store.appendBatch = (requests) => (batches.push(requests.length), appendBatch(requests));
    // The scripted model keeps one script per run id: each run replies 'x'.
    const agent = new Agent({ name: 'a', model: new ScriptedModel([text('x')]) });
    const runs = ['g1', 'g2', 'g3'].map((runId) => Runner.run(agent, 'go', { checkpoint: { store, runId } }));
    expect((await Promise.all(runs)).map((r) => r.output)).toEqual(['x', 'x', 'x']);
    expect(batches.length).toBeGreaterThan(0);
    expect(Math.max(...batches)).toBe(3);
    for (const runId of ['g1', 'g2', 'g3']) expect(store.load(runId)!.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'turn_end']);
    store.close();
  });
});
