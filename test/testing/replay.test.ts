import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, exportRun, parseRunExport, tool, type Model, type RunEvent } from '../../src/index.js';
import { ReplayMismatch, ScriptedModel, call, replayModel, text } from '../../src/entry/testing.js';

/** A system whose models are given: A asks Sub (as a tool), then adds; `offset` changes add's code. */
function system(models: { a: Model; sub: Model }, offset = 0): Agent {
  const add = tool({ name: 'add', description: 'Add.', parameters: z.object({ a: z.number(), b: z.number() }), execute: async ({ a, b }) => a + b + offset });
  const sub = new Agent({ name: 'Sub', model: models.sub, tools: [add] });
  return new Agent({ name: 'A', model: models.a, tools: [add, sub.asTool({ maxTurns: 3 })] });
}
const recordedModels = () => ({
  a: new ScriptedModel([call('ask_sub', { input: 'sum' }, 'c1'), call('add', { a: 2, b: 3 }, 'c2'), text('done: 5')]),
  sub: new ScriptedModel([call('add', { a: 1, b: 2 }, 's1'), text('three')]),
});
// The recorded run was durable: its checkpoint_saved events are the store's, not the run's story.
const shape = (events: RunEvent[]) =>
  events.flatMap((e) => (e.type === 'text_delta' || e.type === 'checkpoint_saved' ? [] : [`${e.path.join('>')} ${e.type}${'call' in e ? ` ${e.call.id} ${e.call.name} ${e.call.arguments}` : ''}${e.type === 'tool_call_completed' ? ` = ${e.output}` : ''}`]));

async function collect(agent: Agent, options: Parameters<typeof Runner.stream>[2]) {
  const handle = Runner.stream(agent, 'go', options);
  const events: RunEvent[] = [];
  for await (const e of handle) events.push(e);
  return { events, result: await handle.result().catch((e: Error) => e) };
}

describe('replayModel: a stored run, replayed offline', () => {
  it('reproduces the recorded tool calls, results and output, from a store or from exported fixtures', async () => {
    const store = new MemoryCheckpointStore();
    const recorded = await collect(system(recordedModels()), { checkpoint: { store, runId: 'recorded' } });
    const replay = await replayModel(store, 'recorded');
    const replayed = await collect(system({ a: replay, sub: replay }), { runId: 'replayed' });
    expect(shape(replayed.events)).toEqual(shape(recorded.events));
    expect(shape(replayed.events)).toContain('A>Sub tool_call_completed s1 add {"a":1,"b":2} = 3');
    expect((replayed.result as { output: string }).output).toBe('done: 5');
    expect(replay.mismatches).toEqual([]);
    // The fixture a user keeps: the run and its sub-run, exported as JSON and read back.
    const fixture = JSON.stringify([exportRun('recorded', (await store.load('recorded'))!), exportRun('recorded/1.0', (await store.load('recorded/1.0'))!)]);
    const fromFixture = await replayModel((JSON.parse(fixture) as unknown[]).map((doc) => parseRunExport(doc)), 'recorded');
    const again = await collect(system({ a: fromFixture, sub: fromFixture }), {});
    expect(shape(again.events)).toEqual(shape(recorded.events));
  });

  it('fails with the first request that differs when the agent now asks differently', async () => {
    const store = new MemoryCheckpointStore();
    await collect(system(recordedModels()), { checkpoint: { store, runId: 'recorded' } });
    const replay = await replayModel(store, 'recorded');
    // add now returns a+b+1: the sub-run's second request carries a different result.
    const replayed = await collect(system({ a: replay, sub: replay }, 1), { runId: 'changed' });
    const first = `replay of run 'recorded/1.0', request 2 (agent 'Sub') differs from the recorded one at message 3: recorded {"role":"tool","callId":"s1","name":"add","content":"3","isError":false}, now {"role":"tool","callId":"s1","name":"add","content":"4","isError":false}.`;
    expect(replay.mismatches[0]!.message).toBe(first);
    expect(replay.mismatches[0]).toBeInstanceOf(ReplayMismatch);
    // The sub-run failed on it; its error reached the caller as a tool error, and the caller's next request differs in turn.
    expect(shape(replayed.events)).toContain(`A tool_call_completed c1 ask_sub {"input":"sum"} = Tool error: agent 'Sub' failed: Model 'replay' failed: ${first}`);
    expect(replay.mismatches).toHaveLength(2);
    expect(replay.mismatches[1]!.message).toMatch(/^replay of run 'recorded', request 2 \(agent 'A'\) differs from the recorded one at message 3: recorded \{"role":"tool","callId":"c1","name":"ask_sub","content":"three","isError":false\}, now/);
    expect((replayed.result as Error).message).toBe(`Model 'replay' failed: ${replay.mismatches[1]!.message}`);
  });

  it('names a run that is not stored', async () => {
    await expect(replayModel(new MemoryCheckpointStore(), 'nope')).rejects.toThrow("replayModel: no stored run 'nope'.");
  });
});
