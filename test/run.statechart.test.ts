import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, ScriptedModel, batch, getRunMachine, text, tool } from '../src/index.js';
import { collect, deferred, flush } from './helpers.js';

describe('the run statechart', () => {
  it('has the explicit states of the design', () => {
    const root = getRunMachine().root;
    expect(Object.keys(root.states)).toEqual(['idle', 'starting', 'turn', 'stopping', 'completed', 'failed', 'cancelled']);
    expect(Object.keys(root.states.turn!.states)).toEqual(['checkLimits', 'model', 'replied', 'executing', 'afterTools', 'checkpoint', 'turnEnd', 'handoff', 'next']);
    expect(Object.keys(root.states.turn!.states.executing!.states)).toEqual(['preflight', 'approvalWait', 'approvalDecided', 'barrier', 'draining']);
    expect(['completed', 'failed', 'cancelled'].map((s) => root.states[s]!.type)).toEqual(['final', 'final', 'final']);
  });

  it('sits in approvalWait, then the barrier states, while the run waits there', async () => {
    const slow = deferred<string>();
    const alone = deferred<string>();
    const p = tool({ name: 'p', description: 'd', parameters: z.object({}), execute: () => slow.promise });
    const gated = tool({ name: 'gated', description: 'd', parameters: z.object({}), needsApproval: true, parallel: false, execute: () => alone.promise });
    const model = new ScriptedModel([batch([['p', {}, 'p1'], ['gated', {}, 'g1']]), text('done')]);
    const handle = Runner.stream(new Agent({ name: 'a', model, tools: [p, gated], approvalHandler: () => 'ask' }), 'q');
    const reading = collect(handle);
    const state = () => JSON.stringify(handle.actor.getSnapshot().value);
    await flush();
    expect(state()).toBe('{"turn":{"executing":"approvalWait"}}');
    handle.approvals.approve('g1');
    await flush();
    expect(state()).toBe('{"turn":{"executing":{"barrier":"waitingForInFlight"}}}');
    slow.resolve('p');
    await flush();
    expect(state()).toBe('{"turn":{"executing":{"barrier":"runningAlone"}}}');
    alone.resolve('g');
    await reading;
    expect(handle.actor.getSnapshot().value).toBe('completed');
    expect(handle.actor.getSnapshot().status).toBe('done');
  });

  it('drains in executing.draining until the last parallel call settles', async () => {
    const gate = deferred<string>();
    const p = tool({ name: 'p', description: 'd', parameters: z.object({}), execute: () => gate.promise });
    const handle = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([batch([['p', {}, 'a'], ['p', {}, 'b']]), text('done')]), tools: [p] }), 'q');
    const reading = collect(handle);
    await flush();
    expect(handle.actor.getSnapshot().value).toEqual({ turn: { executing: 'draining' } });
    gate.resolve('x');
    await reading;
  });
});
