/**
 * Run-level event subscribers (issue 29, item 2; lovia's hooks as subscribers): handlers per
 * event type and '*' (RunOptions.on, handle.on), called in registration order before the event
 * enters the stream; a handler that throws is skipped and reported as subscriber_failed, and
 * never fails or changes the run.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, UserError, tool, type RunEvent } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { collect, deferred, trace } from '../helpers.js';

const lookup = tool({ name: 'lookup', description: 'd', parameters: z.object({}), execute: () => 'found' });
const agent = () => new Agent({ name: 'a', model: new ScriptedModel([call('lookup', {}, 'c1'), text('done')]), tools: [lookup] });
const label = (e: RunEvent): string => ('call' in e ? `${e.type}:${e.call.id}` : e.type);

describe('run-level event subscribers', () => {
  it('call typed and "*" handlers in registration order: RunOptions.on (array order, then key order), then handle.on', async () => {
    const calls: string[] = [];
    const handle = Runner.stream(agent(), 'go', {
      on: [
        { '*': (e) => void calls.push(`any1 ${label(e)}`), tool_call_completed: (e) => void calls.push(`done1 ${e.call.id} ${e.output}`) },
        { tool_call_completed: (e) => void calls.push(`done2 ${e.call.id}`), run_completed: (e) => void calls.push(`end ${e.output}`) },
      ],
    });
    handle.on('tool_call_completed', (e) => void calls.push(`done3 ${e.call.id}`));
    handle.on('*', (e) => void calls.push(`any2 ${label(e)}`));
    const events = await collect(handle);
    expect(trace(events)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_started:c1', 'tool_call_completed:c1', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    // Every event, in stream order, to each of its handlers in registration order.
    const expected = events.flatMap((e) => [
      `any1 ${label(e)}`,
      ...(e.type === 'tool_call_completed' ? [`done1 c1 found`, 'done2 c1', 'done3 c1'] : []),
      ...(e.type === 'run_completed' ? ['end done'] : []),
      `any2 ${label(e)}`,
    ]);
    expect(calls).toEqual(expected);
  });

  it('a handler that throws is skipped and reported as subscriber_failed just before its event; later handlers are still called; the run is unchanged', async () => {
    const calls: string[] = [];
    const handle = Runner.stream(agent(), 'go', {
      on: {
        tool_call_completed: () => {
          throw new Error('metrics down');
        },
        '*': (e) => void calls.push(label(e)),
      },
    });
    handle.on('run_completed', () => {
      throw new TypeError('bad dashboard');
    });
    handle.on('run_completed', () => void calls.push('after the throwing one'));
    const events = await collect(handle);
    expect(trace(events)).toEqual([
      'run_started', 'turn_started', 'message_completed', 'tool_call_started:c1', 'subscriber_failed', 'tool_call_completed:c1', 'turn_ended',
      'turn_started', 'message_completed', 'turn_ended', 'subscriber_failed', 'run_completed',
    ]);
    const failures = events.filter((e): e is Extract<RunEvent, { type: 'subscriber_failed' }> => e.type === 'subscriber_failed');
    expect(failures.map((f) => [f.runId, f.agent, f.eventType, f.subscribedTo, f.error.name, f.error.message])).toEqual([
      [handle.runId, 'a', 'tool_call_completed', 'tool_call_completed', 'Error', 'metrics down'],
      [handle.runId, 'a', 'run_completed', 'run_completed', 'TypeError', 'bad dashboard'],
    ]);
    // The '*' handler (registered before) saw the event and the failure reports; the one after the throw still ran.
    expect(calls.filter((c) => c.startsWith('subscriber_failed') || c.startsWith('tool_call_completed') || c === 'after the throwing one')).toEqual([
      'tool_call_completed:c1', 'subscriber_failed', 'after the throwing one', 'subscriber_failed',
    ]);
    expect((await handle.result()).output).toBe('done');
  });

  it('an async handler that rejects is reported when it rejects; a failing handler of subscriber_failed is not reported again', async () => {
    const gate = deferred<void>();
    const handle = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('wait', {}, 'w1'), text('done')]), tools: [tool({ name: 'wait', description: 'd', parameters: z.object({}), execute: () => gate.promise.then(() => 'waited') })] }), 'go', {
      on: {
        tool_call_started: async () => {
          throw new Error('slow sink failed');
        },
        subscriber_failed: () => {
          gate.resolve();
          throw new Error('never reported');
        },
      },
    });
    const events = await collect(handle);
    expect(trace(events)).toEqual([
      'run_started', 'turn_started', 'message_completed', 'tool_call_started:w1', 'subscriber_failed', 'tool_call_completed:w1', 'turn_ended',
      'turn_started', 'message_completed', 'turn_ended', 'run_completed',
    ]);
    expect(events[4]).toMatchObject({ type: 'subscriber_failed', eventType: 'tool_call_started', subscribedTo: 'tool_call_started', error: { message: 'slow sink failed' } });
  });

  it('Runner.run (nobody reads the stream) still gives subscribers every event, progress events included', async () => {
    const seen: string[] = [];
    const result = await Runner.run(agent(), 'go', { on: { '*': (e) => void (e.type !== 'text_delta' && seen.push(label(e))) } });
    expect(result.output).toBe('done');
    expect(seen).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_started:c1', 'tool_call_completed:c1', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
  });

  it('handle.on returns an unsubscribe; malformed subscribers fail the run at its start with a UserError', async () => {
    const seen: string[] = [];
    const handle = Runner.stream(agent(), 'go');
    const off = handle.on('turn_started', (e) => {
      seen.push(`turn ${e.turn}`);
      off();
    });
    await handle.result();
    expect(seen).toEqual(['turn 1']);
    expect(() => handle.on('*', 'nope' as never)).toThrow(new UserError("The subscriber for '*' must be a function, got string."));

    const events = await collect(Runner.stream(agent(), 'go', { on: { tool_call_completed: 42 as never } }));
    expect(trace(events)).toEqual(['run_started', 'run_failed']);
    expect((events[1] as Extract<RunEvent, { type: 'run_failed' }>).error).toEqual(new UserError("The subscriber for 'tool_call_completed' must be a function, got number."));
  });
});
