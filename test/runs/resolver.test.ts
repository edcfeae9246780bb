/**
 * The tool-call resolver and hidden tools (issue 29, item 3; CubePi's `resolve_tool_call` and
 * `AgentTool.expose_to_model`): a resolveToolCall hook maps a model's call to the call that
 * runs, in the chart's `resolving` step before preflight; tools with `exposeToModel: false`
 * are never sent to the model and run only through a resolver.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, tool, waitForEvent, type AgentHooks, type RunEvent } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { replayItem } from '../../src/inspect/replay.js';
import { collect, completed, trace } from '../helpers.js';

/** The one tool the model sees: it names a hidden tool and its arguments. */
const dispatch = tool({
  name: 'dispatch',
  description: 'Runs a tool by name.',
  parameters: z.object({ tool: z.string(), args: z.record(z.string(), z.unknown()) }),
  execute: () => 'dispatch itself never runs',
});
const add = tool({ name: 'add', description: 'Adds.', parameters: z.object({ a: z.number(), b: z.number() }), exposeToModel: false, execute: ({ a, b }) => String(a + b) });

/** Routes `dispatch` calls to the tool they name; any other call is left as it is. */
const route: NonNullable<AgentHooks['resolveToolCall']> = (c) => {
  if (c.name !== 'dispatch') return undefined;
  const { tool: name, args } = JSON.parse(c.arguments) as { tool: string; args: Record<string, unknown> };
  return { name, arguments: args };
};

const started = (events: readonly RunEvent[]) => events.filter((e): e is Extract<RunEvent, { type: 'tool_call_started' }> => e.type === 'tool_call_started');

describe('resolveToolCall and hidden tools', () => {
  it('routes a dispatcher call to a hidden tool: the model never sees the hidden tool, the result answers the model call', async () => {
    const model = new ScriptedModel([call('dispatch', { tool: 'add', args: { a: 1, b: 2 } }, 'c1'), text('3 it is')]);
    const agent = new Agent({ name: 'a', model, tools: [dispatch, add], hooks: { resolveToolCall: route } });
    const events = await collect(Runner.stream(agent, 'add 1 and 2'));
    expect(trace(events)).toEqual([
      'run_started', 'turn_started', 'message_completed', 'tool_call_started:c1', 'tool_call_completed:c1', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed',
    ]);
    const requested = { id: 'c1', name: 'dispatch', arguments: '{"tool":"add","args":{"a":1,"b":2}}' };
    expect(started(events)[0]).toMatchObject({ call: { id: 'c1', name: 'add', arguments: '{"a":1,"b":2}' }, requested });
    expect(completed(events)[0]).toMatchObject({ call: { id: 'c1', name: 'add' }, requested, output: '3', isError: false });
    // Every request: only the exposed tool; the result names the tool the model called.
    expect(model.requests.map((r) => r.tools.map((t) => t.name))).toEqual([['dispatch'], ['dispatch']]);
    expect(model.requests[1]!.messages[2]).toEqual({ role: 'tool', callId: 'c1', name: 'dispatch', content: '3', isError: false });
  });

  it("a plugin's resolveToolCall hook resolves like the agent's own (hooks follow the active agent's plugins)", async () => {
    const model = new ScriptedModel([call('dispatch', { tool: 'add', args: { a: 2, b: 5 } }, 'c1'), text('7 it is')]);
    const agent = new Agent({ name: 'a', model, tools: [dispatch, add], plugins: [{ name: 'router', setup: () => ({ hooks: [{ resolveToolCall: route }] }) }] });
    const events = await collect(Runner.stream(agent, 'add 2 and 5'));
    expect(started(events)[0]).toMatchObject({ call: { id: 'c1', name: 'add', arguments: '{"a":2,"b":5}' }, requested: { id: 'c1', name: 'dispatch' } });
    expect(completed(events)[0]).toMatchObject({ call: { id: 'c1', name: 'add' }, output: '7', isError: false });
  });

  it('a model calling a hidden tool by name gets the unknown-tool error; it never runs', async () => {
    const ran: string[] = [];
    const secret = tool({ name: 'secret', description: 'd', parameters: z.object({}), exposeToModel: false, execute: () => (ran.push('secret'), 'leaked') });
    const agent = new Agent({ name: 'a', model: new ScriptedModel([batch([['secret', {}, 'c1'], ['nope', {}, 'c2']]), text('ok')]), tools: [dispatch, secret], hooks: { resolveToolCall: route } });
    const events = await collect(Runner.stream(agent, 'go'));
    expect(trace(events)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_completed:c1', 'tool_call_completed:c2', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    expect(completed(events).map((e) => e.output)).toEqual([
      "Tool error: unknown tool 'secret'. Available tools: dispatch.",
      "Tool error: unknown tool 'nope'. Available tools: dispatch.",
    ]);
    expect(ran).toEqual([]);
    // Also without any resolver.
    const plain = new Agent({ name: 'b', model: new ScriptedModel([call('secret', {}, 'c1'), text('ok')]), tools: [dispatch, secret] });
    expect(completed(await collect(Runner.stream(plain, 'go'))).map((e) => e.output)).toEqual(["Tool error: unknown tool 'secret'. Available tools: dispatch."]);
  });

  it("a resolved call that fails validation gets the resolved tool's full schema in its error", async () => {
    const agent = new Agent({ name: 'a', model: new ScriptedModel([call('dispatch', { tool: 'add', args: { a: 'one', b: 2 } }, 'c1'), text('ok')]), tools: [dispatch, add], hooks: { resolveToolCall: route } });
    const events = await collect(Runner.stream(agent, 'go'));
    expect(trace(events)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_completed:c1', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    expect(completed(events)[0]!.output).toBe(
      "Tool error: Invalid arguments for tool 'add': a: Invalid input: expected number, received string\n\n" +
        `Full schema for 'add':\n${JSON.stringify(add.jsonSchema)}`,
    );
    // The model's own call with bad arguments gets the plain error (it has the schema).
    const direct = new Agent({ name: 'b', model: new ScriptedModel([call('dispatch', { tool: 1 }, 'c1'), text('ok')]), tools: [dispatch] });
    expect(completed(await collect(Runner.stream(direct, 'go')))[0]!.output).not.toContain('Full schema');
  });

  it('a resolved call to a sequential tool makes the whole batch sequential', async () => {
    const seq = tool({ name: 'seq', description: 'd', parameters: z.object({}), exposeToModel: false, executionMode: 'sequential', execute: () => 'seq' });
    const par = tool({ name: 'par', description: 'd', parameters: z.object({}), exposeToModel: false, execute: () => 'par' });
    const script = (target: string) => new ScriptedModel([batch([['dispatch', { tool: 'par', args: {} }, 'c1'], ['dispatch', { tool: target, args: {} }, 'c2']]), text('ok')]);
    const run = async (target: string) =>
      trace(await collect(Runner.stream(new Agent({ name: 'a', model: script(target), tools: [dispatch, seq, par], hooks: { resolveToolCall: route } }), 'go'))).slice(3, 7);
    expect(await run('par')).toEqual(['tool_call_started:c1', 'tool_call_started:c2', 'tool_call_completed:c1', 'tool_call_completed:c2']);
    expect(await run('seq')).toEqual(['tool_call_started:c1', 'tool_call_completed:c1', 'tool_call_started:c2', 'tool_call_completed:c2']);
  });

  it('resolvers compose: the first non-empty answer wins; the model call id is kept whatever id an answer carries', async () => {
    const asked: string[] = [];
    const agent = new Agent({
      name: 'a',
      model: new ScriptedModel([batch([['dispatch', { tool: 'add', args: { a: 1, b: 1 } }, 'c1'], ['alias', {}, 'c2']]), text('ok')]),
      tools: [dispatch, add],
      hooks: [
        { resolveToolCall: (c) => void asked.push(`first:${c.id}`) },
        // An alias: a name the model knows from the prompt, mapped to a hidden tool. The id it returns is ignored.
        { resolveToolCall: (c) => (asked.push(`alias:${c.id}`), c.name === 'alias' ? ({ id: 'other', name: 'add', arguments: '{"a":2,"b":2}' } as never) : null) },
        { resolveToolCall: (c) => (asked.push(`route:${c.id}`), route(c, undefined as never)) },
      ],
    });
    const events = await collect(Runner.stream(agent, 'go'));
    expect(asked).toEqual(['first:c1', 'alias:c1', 'route:c1', 'first:c2', 'alias:c2']);
    expect(completed(events).map((e) => [e.call.id, e.call.name, e.requested?.name, e.output])).toEqual([
      ['c1', 'add', 'dispatch', '2'],
      ['c2', 'add', 'alias', '4'],
    ]);
  });

  it('a throwing resolver or a malformed answer gives that call an error result; the run goes on', async () => {
    const agent = new Agent({
      name: 'a',
      model: new ScriptedModel([batch([['dispatch', { tool: 'add', args: { a: 1, b: 1 } }, 'c1'], ['boom', {}, 'c2'], ['odd', {}, 'c3']]), text('ok')]),
      tools: [dispatch, add],
      hooks: {
        resolveToolCall: (c) => {
          if (c.name === 'boom') throw new Error('no route');
          if (c.name === 'odd') return 42 as never;
          return route(c, undefined as never);
        },
      },
    });
    const events = await collect(Runner.stream(agent, 'go'));
    expect(trace(events)).toEqual([
      'run_started', 'turn_started', 'message_completed', 'tool_call_completed:c2', 'tool_call_completed:c3', 'tool_call_started:c1', 'tool_call_completed:c1', 'turn_ended',
      'turn_started', 'message_completed', 'turn_ended', 'run_completed',
    ]);
    expect(completed(events).map((e) => e.output)).toEqual([
      'Tool error: resolveToolCall hook failed: no route',
      'Tool error: resolveToolCall hook failed: it must return { name, arguments } (a tool name, and arguments as JSON text or an object) or nothing, got 42',
      '2',
    ]);
  });

  it("approvals, policies and beforeToolCall judge the resolved call: the hidden tool's needsApproval applies", async () => {
    const seen: string[] = [];
    const remove = tool({ name: 'remove', description: 'd', parameters: z.object({ path: z.string() }), exposeToModel: false, needsApproval: true, execute: ({ path }) => `removed ${path}` });
    const agent = new Agent({
      name: 'a',
      model: new ScriptedModel([call('dispatch', { tool: 'remove', args: { path: '/tmp/x' } }, 'c1'), text('ok')]),
      tools: [dispatch, remove],
      hooks: { resolveToolCall: route, beforeToolCall: ({ call: c, tool: t, args }) => void seen.push(`${c.name}/${t.name}/${JSON.stringify(args)}`) },
      approvalHandler: (request) => (seen.push(`approve? ${request.call.name}`), true),
    });
    const events = await collect(Runner.stream(agent, 'go'));
    expect(trace(events)).toEqual([
      'run_started', 'turn_started', 'message_completed', 'approval_required:c1', 'tool_call_started:c1', 'tool_call_completed:c1', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed',
    ]);
    expect(events.find((e) => e.type === 'approval_required')).toMatchObject({ call: { id: 'c1', name: 'remove' }, requested: { name: 'dispatch' }, args: { path: '/tmp/x' } });
    expect(seen).toEqual(['remove/remove/{"path":"/tmp/x"}', 'approve? remove']);
    expect(completed(events)[0]!.output).toBe('removed /tmp/x');
  });

  it('a durable run parked after a resolved call resumes without running it again; the log and the replay name the tool that ran', async () => {
    const store = new MemoryCheckpointStore();
    const ran: string[] = [];
    const counted = tool({ name: 'add', description: 'Adds.', parameters: z.object({ a: z.number(), b: z.number() }), exposeToModel: false, execute: ({ a, b }) => (ran.push(`add ${a} ${b}`), String(a + b)) });
    const pay = tool({ name: 'pay', description: 'd', parameters: z.object({}), exposeToModel: false, execute: () => (ran.push('pay'), waitForEvent('paid')) });
    const asked: string[] = [];
    const agent = (model: ScriptedModel) => new Agent({ name: 'a', model, tools: [dispatch, counted, pay], hooks: { resolveToolCall: (c) => (asked.push(c.id), route(c, undefined as never)) } });
    const first = await collect(
      Runner.stream(agent(new ScriptedModel([batch([['dispatch', { tool: 'add', args: { a: 2, b: 3 } }, 'c1'], ['dispatch', { tool: 'pay', args: {} }, 'c2']])])), 'go', { checkpoint: { store, runId: 'r1', suspendOnWait: true } }),
    );
    expect(trace(first, ['text_delta', 'checkpoint_saved'])).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_started:c1', 'tool_call_started:c2', 'wait_opened:c2', 'tool_call_completed:c1', 'run_suspended']);
    const entries = store.load('r1')!.entries;
    const result = entries.find((e) => e.kind === 'result');
    expect(result).toEqual({ kind: 'result', turn: 1, message: { role: 'tool', callId: 'c1', name: 'dispatch', content: '5', isError: false }, resolved: { name: 'add', arguments: '{"a":2,"b":3}' } });
    expect(replayItem(result as never, entries.indexOf(result!))).toMatchObject({ kind: 'result', tool: 'dispatch', ran: { name: 'add', arguments: '{"a":2,"b":3}' } });
    expect(entries.find((e) => e.kind === 'wait_request')).toMatchObject({ callId: 'c2', tool: 'pay' });

    await Runner.signal(store, 'r1', 'paid', 'ok');
    const model = new ScriptedModel([text('paid and added')]);
    const resumed = await collect(Runner.resume(agent(model), { store, runId: 'r1' }));
    expect(trace(resumed, ['text_delta', 'checkpoint_saved'])).toEqual(['run_started', 'turn_started', 'tool_call_started:c2', 'wait_resolved:c2', 'tool_call_completed:c2', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    // The stored result stands (add ran once); only the open call was resolved again, to the same tool.
    expect(ran).toEqual(['add 2 3', 'pay']);
    expect(asked).toEqual(['c1', 'c2', 'c2']);
    expect(completed(resumed)[0]).toMatchObject({ call: { id: 'c2', name: 'pay' }, requested: { name: 'dispatch' }, output: 'ok' });
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(['dispatch']);
    expect(model.requests[0]!.messages.slice(2).map((m) => ('name' in m ? `${m.name}:${m.content}` : m.role))).toEqual(['dispatch:5', 'dispatch:ok']);
  });
});
