/**
 * Waits of calls (docs/architecture.md, "Waits"): a tool returns `waitForEvent` or
 * `waitUntil` and its call's result comes when the wait ends; each wait is a child machine of
 * the call's actor, resolved from the handle, from another process (Runner.signal /
 * Runner.resolve / Runner.answer on the stored run) or at its deadline; a durable run parks
 * while it only waits and resumes without running the tool again.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, RunSuspended, Runner, UserError, askHuman, tool, waitForEvent, waitUntil, type RunEvent } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { collect, deferred, trace } from '../helpers.js';

/** A tool that starts a payment and waits for its confirmation event; `ran` counts executions. */
function payTool(ran: string[], timeoutMs?: number) {
  return tool({
    name: 'pay',
    description: 'Pays and waits for the confirmation.',
    parameters: z.object({ order: z.string() }),
    execute: ({ order }, ctx) => {
      ran.push(ctx.callId);
      return waitForEvent(`paid:${order}`, timeoutMs !== undefined ? { timeoutMs } : {});
    },
  });
}

const quiet = (events: readonly RunEvent[]) => trace(events, ['text_delta', 'checkpoint_saved']);
const resultOf = (events: readonly RunEvent[], id: string) => events.find((e) => e.type === 'tool_call_completed' && e.call.id === id) as Extract<RunEvent, { type: 'tool_call_completed' }>;

describe('a call that waits for an external event', () => {
  it('gets the payload of handle.signal as its result, once; the wait opens and ends on the stream', async () => {
    const ran: string[] = [];
    const model = new ScriptedModel([call('pay', { order: 'A1' }, 'p1'), text('paid')]);
    const handle = Runner.stream(new Agent({ name: 'cashier', model, tools: [payTool(ran)] }), 'pay A1', { runId: 'r' });
    expect(handle.signal('paid:A1', { amount: 1 })).toBe(0);
    const events = await collect(handle, (e) => {
      if (e.type !== 'wait_opened') return;
      expect(e).toMatchObject({ waitId: 'r:1.0', kind: 'event', detail: { name: 'paid:A1' }, deadline: undefined });
      expect(handle.waits.pending().map((w) => [w.waitId, w.kind, w.callId, w.tool, w.detail])).toEqual([['r:1.0', 'event', 'p1', 'pay', { name: 'paid:A1' }]]);
      expect(() => handle.signal('paid:A1', 10n)).toThrow(UserError);
      expect(handle.signal('paid:A1', { amount: 42 })).toBe(1);
    });
    expect(quiet(events)).toEqual([
      'run_started', 'turn_started', 'message_completed', 'tool_call_started:p1', 'wait_opened:p1', 'wait_resolved:p1', 'tool_call_completed:p1',
      'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed',
    ]);
    expect(events.find((e) => e.type === 'wait_resolved')).toMatchObject({ waitId: 'r:1.0', timedOut: false, resolution: { amount: 42 } });
    expect(resultOf(events, 'p1')).toMatchObject({ output: '{"amount":42}', isError: false, result: { amount: 42 } });
    expect(ran).toEqual(['p1']);
    expect(handle.waits.pending()).toEqual([]);
  });

  it('every call waiting for the same event gets it; one that times out gets a WaitTimeout error result', async () => {
    const ran: string[] = [];
    const slow = tool({ name: 'slow', description: 'd', parameters: z.object({}), execute: () => waitForEvent('never', { timeoutMs: 20 }) });
    const model = new ScriptedModel([batch([['pay', { order: 'A' }, 'p1'], ['pay', { order: 'A' }, 'p2'], ['slow', {}, 's1']]), text('done')]);
    const handle = Runner.stream(new Agent({ name: 'cashier', model, tools: [payTool(ran), slow] }), 'go');
    const opened = deferred<void>();
    let seen = 0;
    const reading = collect(handle, (e) => {
      if (e.type === 'wait_opened' && e.kind === 'event' && ++seen === 3) opened.resolve();
    });
    await opened.promise;
    expect(handle.signal('paid:A', 'ok')).toBe(2);
    const events = await reading;
    expect(resultOf(events, 'p1')).toMatchObject({ output: 'ok', isError: false });
    expect(resultOf(events, 'p2')).toMatchObject({ output: 'ok', isError: false });
    expect(resultOf(events, 's1')).toMatchObject({ output: "Tool error: event 'never' did not arrive within 20 ms", isError: true });
    expect(events.find((e) => e.type === 'wait_resolved' && e.call.id === 's1')).toMatchObject({ timedOut: true });
  });

  it('a cancel while it waits gives the call its cancelled result and withdraws the wait', async () => {
    const handle = Runner.stream(new Agent({ name: 'cashier', model: new ScriptedModel([call('pay', { order: 'A1' }, 'p1')]), tools: [payTool([])] }), 'go');
    const events = await collect(handle, (e) => {
      if (e.type === 'wait_opened') handle.cancel('changed my mind');
    });
    expect(resultOf(events, 'p1')).toMatchObject({ output: 'Tool error: run cancelled: changed my mind', isError: true });
    expect(events.at(-1)).toMatchObject({ type: 'run_failed' });
    expect(handle.waits.pending()).toEqual([]);
    expect(handle.signal('paid:A1', 1)).toBe(0);
  });

  it('handle.waits.resolve resolves a wait by id as its kind takes it; a timer cannot be resolved', async () => {
    const sleep = tool({ name: 'sleep', description: 'd', parameters: z.object({}), execute: () => waitUntil(Date.now() + 3_600_000) });
    const model = new ScriptedModel([batch([['pay', { order: 'B' }, 'p1'], ['sleep', {}, 'z1']]), text('done')]);
    const handle = Runner.stream(new Agent({ name: 'cashier', model, tools: [payTool([]), sleep] }), 'go', { runId: 'r' });
    const both = deferred<void>();
    const reading = collect(handle, (e) => {
      if (e.type === 'wait_opened' && handle.waits.pending().length === 2) both.resolve();
      if (e.type === 'tool_call_completed' && e.call.id === 'p1') handle.cancel('done with the timer');
    });
    await both.promise;
    expect(() => handle.waits.resolve('r:1.1', { at: 1 })).toThrow(/^Wait 'r:1\.1' is a timer: it ends on its own at \d{4}-.*; it cannot be resolved\.$/);
    expect(handle.waits.resolve('nope', 1)).toBe(false);
    expect(handle.waits.resolve('r:1.0', [1, 2])).toBe(true);
    const events = await reading;
    expect(resultOf(events, 'p1')).toMatchObject({ output: '[1,2]', isError: false });
    expect(resultOf(events, 'z1')).toMatchObject({ isError: true, output: 'Tool error: run cancelled: done with the timer' });
  });
});

describe('a call that waits until a time', () => {
  it('ends when the time comes; its result says until when', async () => {
    const until = Date.now() + 25;
    const sleep = tool({ name: 'sleep', description: 'd', parameters: z.object({}), execute: () => waitUntil(new Date(until)) });
    const handle = Runner.stream(new Agent({ name: 'sleeper', model: new ScriptedModel([call('sleep', {}, 'z1'), text('awake')]), tools: [sleep] }), 'go');
    const events = await collect(handle);
    expect(resultOf(events, 'z1')).toMatchObject({ output: `Waited until ${new Date(until).toISOString()}.`, isError: false });
    expect(events.find((e) => e.type === 'wait_resolved')).toMatchObject({ kind: 'timer', timedOut: false, resolution: { at: until } });
    expect(() => waitUntil(Number.NaN)).toThrow("waitUntil needs a Date or epoch ms, got NaN.");
    expect(() => waitForEvent('')).toThrow('waitForEvent needs an event name, got "".');
    expect(() => waitForEvent('x', { timeoutMs: -1 })).toThrow('waitForEvent: timeoutMs must be a positive number of ms, got -1.');
  });
});

describe('durable waits: park, resolve from another process, resume without running the tool again', () => {
  it('an event wait parks the run; Runner.signal records the payload; Runner.resume completes with it', async () => {
    const store = new MemoryCheckpointStore();
    const ran: string[] = [];
    const agent = (model: ScriptedModel) => new Agent({ name: 'cashier', model, tools: [payTool(ran)] });
    const first = Runner.stream(agent(new ScriptedModel([call('pay', { order: 'A1' }, 'p1')])), 'pay', { checkpoint: { store, runId: 'd1', suspendOnWait: true } });
    const events = await collect(first);
    expect(quiet(events)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_started:p1', 'wait_opened:p1', 'run_suspended']);
    const suspended = events.at(-1) as Extract<RunEvent, { type: 'run_suspended' }>;
    expect([suspended.approvals, suspended.waits.map((w) => [w.waitId, w.kind, w.detail])]).toEqual([[], [['d1:1.0', 'event', { name: 'paid:A1' }]]]);
    const error = (await first.result().catch((e: unknown) => e)) as RunSuspended;
    expect(error).toBeInstanceOf(RunSuspended);
    expect(error.message).toBe("Run 'd1' is suspended, waiting for event 'paid:A1' (wait 'd1:1.0'); resolve them (Runner.decide, Runner.answer, Runner.signal; a timer needs nothing) and continue with Runner.resume.");
    expect(store.load('d1')!.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'wait_request']);

    expect(await Runner.signal(store, 'd1', 'paid:other', 1)).toEqual([]);
    await expect(Runner.signal(store, 'd1', 'paid:A1', () => 1)).rejects.toThrow("The payload of event 'paid:A1' cannot be written as JSON (got function).");
    const written = await Runner.signal(store, 'd1', 'paid:A1', { amount: 7 }, 'webhook');
    expect(written).toMatchObject([{ kind: 'wait_resolution', waitId: 'd1:1.0', waitKind: 'event', callId: 'p1', ended: 'resolved', resolution: { amount: 7 }, by: 'webhook' }]);

    const model = new ScriptedModel([text('paid 7')]);
    const resumed = await Runner.resume(agent(model), { store, runId: 'd1' }).result();
    expect(resumed.output).toBe('paid 7');
    expect(ran).toEqual(['p1']);
    expect(model.requests[0]!.messages.at(-1)).toMatchObject({ role: 'tool', callId: 'p1', content: '{"amount":7}', isError: false });
    expect(store.load('d1')!.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'wait_request', 'wait_resolution', 'result', 'turn_end', 'reply', 'turn_end']);
  });

  it('resumed before its event arrives, the call waits again (the tool does not run again) and the live handle delivers it', async () => {
    const store = new MemoryCheckpointStore();
    const ran: string[] = [];
    const agent = (model: ScriptedModel) => new Agent({ name: 'cashier', model, tools: [payTool(ran, 60_000)] });
    await Runner.stream(agent(new ScriptedModel([call('pay', { order: 'A2' }, 'p1')])), 'pay', { checkpoint: { store, runId: 'd2', suspendOnWait: true } }).result().catch(() => undefined);
    const requested = store.load('d2')!.entries[2] as { deadline: number; requestedAt: number };
    expect(requested.deadline - requested.requestedAt).toBe(60_000);
    const handle = Runner.resume(agent(new ScriptedModel([text('done')])), { store, runId: 'd2' });
    const events = await collect(handle, (e) => {
      if (e.type === 'wait_opened') {
        // The resumed wait keeps the stored request time and deadline.
        expect(e.deadline).toBe(requested.deadline);
        handle.signal('paid:A2', 'confirmed');
      }
    });
    expect(ran).toEqual(['p1']);
    expect(quiet(events).slice(0, 5)).toEqual(['run_started', 'turn_started', 'tool_call_started:p1', 'wait_opened:p1', 'wait_resolved:p1']);
    expect(resultOf(events, 'p1')).toMatchObject({ output: 'confirmed', isError: false });
  });

  it('a timer parks the run and a resume after its time completes it; Runner.resolve refuses to resolve it', async () => {
    const store = new MemoryCheckpointStore();
    // Far enough ahead that the run parks before it is due (a due wait ends at once: the run does not park for it).
    const until = Date.now() + 1_000;
    const sleep = tool({ name: 'sleep', description: 'd', parameters: z.object({}), execute: () => waitUntil(until) });
    const agent = (model: ScriptedModel) => new Agent({ name: 'sleeper', model, tools: [sleep] });
    const parked = (await Runner.stream(agent(new ScriptedModel([call('sleep', {}, 'z1')])), 'go', { checkpoint: { store, runId: 'd3', suspendOnWait: true } }).result().catch((e: unknown) => e)) as RunSuspended;
    expect(parked.waits.map((w) => [w.kind, w.deadline])).toEqual([['timer', until]]);
    await expect(Runner.resolve(store, 'd3', 'd3:1.0', { at: 1 })).rejects.toThrow(/^Wait 'd3:1\.0' is a timer/);
    const result = await Runner.resume(agent(new ScriptedModel([text('rested')])), { store, runId: 'd3' }).result();
    expect(result.output).toBe('rested');
    expect(store.load('d3')!.entries.filter((e) => e.kind === 'wait_resolution')).toMatchObject([{ waitKind: 'timer', ended: 'resolved', resolution: { at: until }, by: 'clock' }]);
  });

  it('a question (askHuman) parks the run; Runner.answer checks and records the answer; the resumed call gets it', async () => {
    const store = new MemoryCheckpointStore();
    const agent = (model: ScriptedModel) => new Agent({ name: 'planner', model, tools: [askHuman()] });
    await Runner.stream(agent(new ScriptedModel([call('ask_human', { question: 'Which city?', options: ['Rome', 'Paris'] }, 'h1')])), 'plan', {
      checkpoint: { store, runId: 'd4', suspendOnWait: true },
    }).result().catch(() => undefined);
    await expect(Runner.answer(store, 'd4', 'd4:1.0', 'Oslo')).rejects.toThrow("'Oslo' is not an option of 'Which city?'; options: Rome, Paris.");
    await expect(Runner.answer(store, 'd4', 'nope', 'Rome')).rejects.toThrow("Run 'd4' has no open question 'nope' (it is unknown, already answered, or its call finished).");
    expect(await Runner.answer(store, 'd4', 'd4:1.0', 'Rome', 'alice')).toMatchObject({ waitKind: 'question', resolution: 'Rome', by: 'alice' });
    const model = new ScriptedModel([text('Rome it is')]);
    await Runner.resume(agent(model), { store, runId: 'd4' }).result();
    expect(model.requests[0]!.messages.at(-1)).toMatchObject({ role: 'tool', callId: 'h1', content: 'Rome' });
  });

  it('parks only once nothing else runs: a quick call beside the wait finishes and is stored first', async () => {
    const store = new MemoryCheckpointStore();
    const gate = deferred<string>();
    const quick = tool({ name: 'quick', description: 'd', parameters: z.object({}), execute: () => gate.promise });
    const handle = Runner.stream(new Agent({ name: 'cashier', model: new ScriptedModel([batch([['pay', { order: 'C' }, 'p1'], ['quick', {}, 'q1']])]), tools: [payTool([]), quick] }), 'go', {
      checkpoint: { store, runId: 'd5', suspendOnWait: true },
    });
    const events = await collect(handle, (e) => {
      if (e.type === 'wait_opened') gate.resolve('quick done');
    });
    expect(quiet(events)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_started:p1', 'tool_call_started:q1', 'wait_opened:p1', 'tool_call_completed:q1', 'run_suspended']);
    expect(store.load('d5')!.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'wait_request', 'result']);
  });
});
