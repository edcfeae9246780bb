import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, getRunMachine, tool } from '../src/index.js';
import { ScriptedModel, batch, text } from '../src/entry/testing.js';
import { collect, deferred, flush } from './helpers.js';
import { RUN_STATE, stateChain, stateValueOf } from '../src/machines/run-states.js';
import type { AnyStateNode } from 'xstate';

describe('the run statechart', () => {
  it('has the explicit states of the design', () => {
    const root = getRunMachine().root;
    expect(Object.keys(root.states)).toEqual(['idle', 'restoring', 'starting', 'turn', 'ending', 'finishing', 'savingSession', 'stopping', 'suspending', 'completed', 'failed', 'cancelled', 'suspended']);
    expect(Object.keys(root.states.turn!.states)).toEqual(['checkLimits', 'pluginSetup', 'model', 'executing', 'turnEnd', 'afterTurn', 'checkpoint', 'handoff']);
    expect(Object.keys(root.states.turn!.states.executing!.states)).toEqual(['resolving', 'preflight', 'throttled', 'approvalWait', 'barrier', 'draining']);
    expect(['completed', 'failed', 'cancelled', 'suspended'].map((s) => root.states[s]!.type)).toEqual(['final', 'final', 'final', 'final']);
  });

  it('is named by one table of state ids (RUN_STATE) that lists exactly its states', () => {
    const ids: string[] = [];
    const walk = (node: AnyStateNode): void => {
      if (node.id !== 'run') ids.push(node.id);
      for (const child of Object.values(node.states) as AnyStateNode[]) walk(child);
    };
    walk(getRunMachine().root as AnyStateNode);
    expect(Object.values(RUN_STATE).sort()).toEqual(ids.sort());
    expect(stateChain(RUN_STATE.waitingForInFlight)).toEqual(['run', 'run.turn', 'run.turn.executing', 'run.turn.executing.barrier', 'run.turn.executing.barrier.waitingForInFlight']);
    expect(stateValueOf(RUN_STATE.waitingForInFlight)).toEqual({ turn: { executing: { barrier: 'waitingForInFlight' } } });
    expect(stateValueOf(RUN_STATE.completed)).toBe('completed');
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

describe('inspection', () => {
  it('reports the run, executor and tool-call actors to an opt-in observer', async () => {
    const { tool: makeTool } = await import('../src/index.js');
    const p = makeTool({ name: 'p', description: 'd', parameters: z.object({}), execute: () => 'ok' });
    const actors: string[] = [];
    const snapshots = new Set<string>();
    const model = new ScriptedModel([batch([['p', {}, 'c1'], ['p', {}, 'c2']]), text('done')]);
    await Runner.run(new Agent({ name: 'a', model, tools: [p] }), 'q', {
      runId: 'run-inspected',
      inspect: (event) => {
        if (event.type === '@xstate.actor') actors.push((event.actorRef as unknown as { id: string }).id);
        if (event.type === '@xstate.snapshot' && (event.actorRef as unknown as { id: string }).id === 'run-inspected') snapshots.add(JSON.stringify((event.snapshot as unknown as { value: unknown }).value));
      },
    });
    expect(actors.slice(0, 2)).toEqual(['run-inspected', 'tools']);
    // Tool-call actors are keyed <turn>.<index>: model call ids may repeat.
    expect(actors.filter((id) => id === '1.0' || id === '1.1')).toEqual(['1.0', '1.1']);
    expect([...snapshots]).toContain('{"turn":{"executing":"draining"}}');
    expect([...snapshots].at(-1)).toBe('"completed"');
  });
});
