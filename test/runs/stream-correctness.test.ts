import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { Agent, RunCancelled, Runner, tool, toolResult, type RunEvent } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { collect, deferred, flush, trace } from '../helpers.js';

const noop = tool({ name: 'noop', description: 'd', parameters: z.object({}), execute: () => 'ok' });

describe('iterating a handle', () => {
  it('two concurrent loops each get every event, in order, and neither hangs', async () => {
    const model = new ScriptedModel([batch([['noop', {}, 'a'], ['noop', {}, 'b']]), text('done')]);
    const handle = Runner.stream(new Agent({ name: 'a', model, tools: [noop] }), 'q');
    const [first, second] = await Promise.all([collect(handle), collect(handle)]);
    expect(trace(first)).toEqual(trace(second));
    expect(first).toEqual(second);
    expect(trace(first).at(-1)).toBe('run_completed');
    expect(first.filter((e) => e.type === 'run_completed')).toHaveLength(1);
  });

  it('a loop started after the run ended replays the whole stream', async () => {
    const handle = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('noop', {}, 'a'), text('done')]), tools: [noop] }), 'q');
    const first = await collect(handle);
    const late = await collect(handle);
    expect(late).toEqual(first);
  });

  it('result() before iterating keeps every event for a later loop', async () => {
    const handle = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('noop', {}, 'a'), text('done')]), tools: [noop] }), 'q');
    const result = await handle.result();
    expect(result.output).toBe('done');
    const events = await collect(handle);
    expect(trace(events)).toEqual([
      'run_started', 'turn_started', 'message_completed', 'tool_call_started:a', 'tool_call_completed:a', 'turn_ended',
      'turn_started', 'message_completed', 'turn_ended', 'run_completed',
    ]);
  });

  it('result() with no loop hands approvals to the handler at once', async () => {
    const ran: string[] = [];
    const gated = tool({ name: 'g', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => void ran.push('g') });
    const handle = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('g', {}, 'g1'), text('done')]), tools: [gated], approvalHandler: () => 'allow' }), 'q');
    await handle.result();
    expect(ran).toEqual(['g']);
  });
});

describe('cancel before the first model request', () => {
  function countingModel() {
    const script = new ScriptedModel([text('never')]);
    const stream = vi.fn((request: Parameters<ScriptedModel['stream']>[0]) => script.stream(request));
    return { model: { name: 'counting', stream }, stream };
  }

  it('handle.cancel() right after stream(): exactly run_started, run_failed(RunCancelled), no model request', async () => {
    const { model, stream } = countingModel();
    const handle = Runner.stream(new Agent({ name: 'a', model }), 'q');
    handle.cancel('changed my mind');
    const events = await collect(handle);
    expect(events.map((e) => e.type)).toEqual(['run_started', 'run_failed']);
    const failed = events[1] as Extract<RunEvent, { type: 'run_failed' }>;
    expect(failed.error).toBeInstanceOf(RunCancelled);
    expect(failed.error.message).toBe('Run cancelled: changed my mind');
    expect(stream).not.toHaveBeenCalled();
    await expect(handle.result()).rejects.toBe(failed.error);
  });

  it('an already-aborted signal: exactly run_started, run_failed(RunCancelled), no model request', async () => {
    const { model, stream } = countingModel();
    const controller = new AbortController();
    controller.abort('too late');
    const events = await collect(Runner.stream(new Agent({ name: 'a', model }), 'q', { signal: controller.signal }));
    expect(events.map((e) => e.type)).toEqual(['run_started', 'run_failed']);
    expect((events[1] as Extract<RunEvent, { type: 'run_failed' }>).error.message).toBe('Run cancelled: too late');
    expect(stream).not.toHaveBeenCalled();
  });
});

describe('mailbox messages are never lost', () => {
  it('a message posted in a batch that terminates gives the model another turn', async () => {
    const stop = tool({ name: 'stop', description: 'd', parameters: z.object({}), execute: (_a, ctx) => { ctx.mailbox.post('one more thing'); return toolResult({ content: 'stopped', terminate: true }); } });
    const model = new ScriptedModel([call('stop', {}, 's'), text('handled the note')]);
    const result = await Runner.run(new Agent({ name: 'a', model, tools: [stop] }), 'q');
    expect(result.output).toBe('handled the note');
    expect(model.requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'one more thing' });
  });

  it('without a message, a terminating batch still ends the run with its output and no model call', async () => {
    const stop = tool({ name: 'stop', description: 'd', parameters: z.object({}), execute: () => toolResult({ content: 'stopped', terminate: true }) });
    const model = new ScriptedModel([call('stop', {}, 's')]);
    const result = await Runner.run(new Agent({ name: 'a', model, tools: [stop] }), 'q');
    expect(result.output).toBe('stopped');
    expect(model.requests).toHaveLength(1);
  });

  it('a message posted while the final reply streams gives the model another turn', async () => {
    const gate = deferred<void>();
    let post: ((text: string) => void) | undefined;
    const grab = tool({ name: 'grab', description: 'd', parameters: z.object({}), execute: (_a, ctx) => { post = (t) => ctx.mailbox.post(t); return 'ok'; } });
    const script = new ScriptedModel([call('grab', {}, 'g'), text('first answer'), text('saw the late note')]);
    let requests = 0;
    const model = {
      name: 'slow-final',
      async *stream(request: Parameters<ScriptedModel['stream']>[0]) {
        requests++;
        if (requests === 2) {
          post!('late note');
          await gate.promise;
        }
        yield* script.stream(request);
      },
    };
    const handle = Runner.stream(new Agent({ name: 'a', model, tools: [grab] }), 'q');
    const reading = collect(handle);
    await flush();
    gate.resolve();
    await reading;
    const result = await handle.result();
    expect(result.output).toBe('saw the late note');
    expect(script.requests[2]!.messages.at(-1)).toEqual({ role: 'user', content: 'late note' });
  });
});

describe('tool errors and renderers', () => {
  class QuotaError extends Error {}
  class NotAnError {}

  it.each([
    ['an Error subclass without a message', () => new QuotaError(), 'Tool error: QuotaError'],
    ['a plain Error without a message', () => new Error(), 'Tool error: Error'],
    ['a class instance that is not an Error', () => new NotAnError(), 'Tool error: NotAnError'],
    ['a string', () => 'disk full', 'Tool error: disk full'],
  ])('%s reports %s', async (_name, make, output) => {
    const t = tool({ name: 't', description: 'd', parameters: z.object({}), execute: () => { throw make(); } });
    const result = await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([call('t', {}, 'c'), text('ok')]), tools: [t] }), 'q');
    expect(result.transcript[2]).toMatchObject({ role: 'tool', isError: true, content: output });
  });

  it('an async renderer is awaited; a rejecting one is an error result and the tool is not run again', async () => {
    let runs = 0;
    const asyncRendered = tool({ name: 'r', description: 'd', parameters: z.object({}), execute: () => ({ n: 1 }), resultRenderer: async (v) => `n is ${(v as { n: number }).n}` });
    const rejecting = tool({ name: 'x', description: 'd', parameters: z.object({}), retries: 2, execute: () => { runs++; return { n: 2 }; }, resultRenderer: () => Promise.reject(new Error('template missing')) });
    const model = new ScriptedModel([batch([['r', {}, 'r1'], ['x', {}, 'x1']]), text('ok')]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: [asyncRendered, rejecting] }), 'q'));
    const done = events.filter((e): e is Extract<RunEvent, { type: 'tool_call_completed' }> => e.type === 'tool_call_completed');
    expect(done.map((e) => [e.call.id, e.output, e.isError])).toEqual([
      ['r1', 'n is 1', false],
      ['x1', 'Tool error: result rendering failed: template missing', true],
    ]);
    expect(runs).toBe(1);
  });
});
