/**
 * Plugins (issue 29, item 1; lovia's plugins): `{ name, setup(ctx) }` on an agent, set up once
 * per run per agent when it becomes active (turn.pluginSetup, docs/plugins.md), contributing
 * tools (merged after the agent's own, before its handoffs), instructions, view injectors
 * (request view only), hooks and guardrails (while their agent is active) and a close (once,
 * on every ending).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, GuardrailTripped, MemoryCheckpointStore, PluginError, RunSuspended, Runner, UserError, tool, type Plugin, type PluginSetup, type RunEvent } from '../../src/index.js';
import { mcpPlugin } from '../../src/mcp/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { collect, deferred, trace } from '../helpers.js';

const named = (name: string, output = `${name} ran`) => tool({ name, description: `tool ${name}`, parameters: z.object({}), execute: () => output });

/** A plugin that writes its setup and close into `log` (with the event stream beside them, through `handle.on`). */
function logged(name: string, log: string[], contributes: (ctx: { agent: { name: string } }) => PluginSetup = () => ({})): Plugin {
  return {
    name,
    setup: (ctx) => {
      log.push(`setup ${name} (${ctx.agent.name}${ctx.resumed ? ', resumed' : ''})`);
      return { ...contributes(ctx), close: () => void log.push(`close ${name}`) };
    },
  };
}

/** Streams a run with every event's type written into `log` by a subscriber, beside what the plugins write. */
async function run(agent: Agent, log: string[], options: Parameters<typeof Runner.stream>[2] = {}): Promise<RunEvent[]> {
  const handle = Runner.stream(agent, 'go', options);
  handle.on('*', (e) => void (e.type !== 'text_delta' && log.push('call' in e ? `${e.type}:${e.call.id}` : e.type)));
  const events = await collect(handle);
  await handle.result().catch(() => undefined);
  return events;
}

describe('plugins', () => {
  it('merge tools in a fixed order (agent tools, plugins in order, handoffs) and add instructions after the agent\'s, before the run\'s', async () => {
    const log: string[] = [];
    const other = new Agent({ name: 'other', model: new ScriptedModel([]) });
    const model = new ScriptedModel([call('from_b', {}, 'c1'), text('done')]);
    const agent = new Agent({
      name: 'a',
      instructions: 'Be brief.',
      model,
      tools: [named('own')],
      handoffs: [other],
      plugins: [logged('p1', log, () => ({ tools: [named('from_a')], instructions: 'Use from_a.' })), logged('p2', log, () => ({ tools: [named('from_b')] })), logged('p3', log, () => ({ instructions: 'Use from_b.' }))],
    });
    await run(agent, log, { instructions: 'Run-level text.' });
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(['own', 'from_a', 'from_b', 'transfer_to_other']);
    expect(model.requests[0]!.system).toBe('Be brief.\n\nUse from_a.\n\nUse from_b.\n\nRun-level text.');
    // Set up once, after run_started and before the first turn; closed after the terminal event, last first.
    expect(log).toEqual([
      'run_started', 'setup p1 (a)', 'setup p2 (a)', 'setup p3 (a)', 'turn_started', 'message_completed', 'tool_call_started:c1', 'tool_call_completed:c1', 'turn_ended',
      'turn_started', 'message_completed', 'turn_ended', 'run_completed', 'close p3', 'close p2', 'close p1',
    ]);
  });

  it('a plugin tool that clashes fails the run at its start with a UserError naming both sources; the setups made are closed once', async () => {
    const log: string[] = [];
    const model = new ScriptedModel([text('never')]);
    const agent = new Agent({ name: 'a', model, tools: [named('search')], plugins: [logged('docs', log, () => ({ tools: [named('search')] }))] });
    const events = await run(agent, log);
    expect(trace(events)).toEqual(['run_started', 'run_failed']);
    const error = (events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>).error;
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toBe("Tool name conflict for 'search' from plugin 'docs' (also from agent tools).");
    // The setup never joined the run: it is closed before the run fails.
    expect(log).toEqual(['run_started', 'setup docs (a)', 'close docs', 'run_failed']);
    expect(model.requests).toHaveLength(0);

    const withHandoff = new Agent({ name: 'a', model, handoffs: [new Agent({ name: 'b', model })], plugins: [{ name: 'p', setup: () => ({ tools: [named('transfer_to_b')] }) }] });
    await expect(Runner.run(withHandoff, 'go')).rejects.toThrow("Tool name conflict for 'transfer_to_b' from handoffs (also from plugin 'p').");
  });

  it('two plugins of one name are a UserError when the agent is made, before any setup', () => {
    const log: string[] = [];
    expect(() => new Agent({ name: 'a', model: new ScriptedModel([]), plugins: [logged('todo', log), logged('todo', log)] })).toThrow(
      new UserError("Agent 'a': two plugins are named 'todo'; a plugin's name must be unique on its agent."),
    );
    expect(() => new Agent({ name: 'a', model: new ScriptedModel([]), plugins: [{ name: 'x' } as never] })).toThrow("Agent 'a': plugins[0] must be a plugin { name: non-empty string, setup(ctx) }.");
    expect(log).toEqual([]);
  });

  it('sets up once per run per agent: the first at the start, a handoff target when it becomes active, not again when handed back to', async () => {
    const log: string[] = [];
    const model = new ScriptedModel([call('transfer_to_b', {}, 'h1'), call('transfer_to_a', {}, 'h2'), call('a_tool', {}, 'c3'), text('back in a')]);
    const a = new Agent({ name: 'a', model, plugins: [logged('pa', log, () => ({ tools: [named('a_tool')] }))] });
    const b = new Agent({ name: 'b', model, handoffs: [a], plugins: [logged('pb', log, () => ({ instructions: 'You are b.' }))] });
    a.handoffs.push(b);
    const events = await run(a, log);
    expect(events.at(-1)).toMatchObject({ type: 'run_completed', output: 'back in a' });
    expect(log).toEqual([
      'run_started', 'setup pa (a)',
      'turn_started', 'message_completed', 'tool_call_started:h1', 'tool_call_completed:h1', 'turn_ended', 'handoff_occurred', 'setup pb (b)',
      'turn_started', 'message_completed', 'tool_call_started:h2', 'tool_call_completed:h2', 'turn_ended', 'handoff_occurred',
      'turn_started', 'message_completed', 'tool_call_started:c3', 'tool_call_completed:c3', 'turn_ended',
      'turn_started', 'message_completed', 'turn_ended', 'run_completed', 'close pb', 'close pa',
    ]);
    // Each agent's request has its own plugins' tools and instructions only.
    expect(model.requests.map((r) => [r.agent, r.tools.map((t) => t.name), r.system])).toEqual([
      ['a', ['a_tool', 'transfer_to_b'], ''],
      ['b', ['transfer_to_a'], 'You are b.'],
      ['a', ['a_tool', 'transfer_to_b'], ''],
      ['a', ['a_tool', 'transfer_to_b'], ''],
    ]);
  });

  it('view injectors add to each model request of their agent, never to the transcript or the stored log', async () => {
    const store = new MemoryCheckpointStore();
    let turn = 0;
    const todo: Plugin = { name: 'todo', setup: () => ({ viewInjectors: [() => `<system-reminder>turn ${++turn}</system-reminder>`, () => undefined, (ctx) => [{ role: 'user', content: `deps: ${String(ctx.deps)}` }]] }) };
    const seenByHook: string[] = [];
    const model = new ScriptedModel([call('own', {}, 'c1'), text('done')]);
    const agent = new Agent({ name: 'a', model, tools: [named('own')], plugins: [todo], hooks: { beforeModelCall: (view) => void seenByHook.push(String(view.messages.at(-2)?.content)) } });
    const result = await Runner.run(agent, 'go', { context: 'D', checkpoint: { store, runId: 'v1' } });
    expect(model.requests.map((r) => r.messages.map((m) => `${m.role}:${m.content}`))).toEqual([
      ['user:go', 'user:<system-reminder>turn 1</system-reminder>', 'user:deps: D'],
      ['user:go', 'assistant:', 'tool:own ran', 'user:<system-reminder>turn 2</system-reminder>', 'user:deps: D'],
    ]);
    // The hooks see the view with the injected entries (injectors run first).
    expect(seenByHook).toEqual(['<system-reminder>turn 1</system-reminder>', '<system-reminder>turn 2</system-reminder>']);
    expect(result.transcript.map((m) => m.content)).toEqual(['go', '', 'own ran', 'done']);
    expect(JSON.stringify(store.load('v1')!.entries)).not.toContain('system-reminder');
  });

  it('a throwing view injector fails the run with a PluginError naming the plugin', async () => {
    const agent = new Agent({ name: 'a', model: new ScriptedModel([text('never')]), plugins: [{ name: 'clock', setup: () => ({ viewInjectors: [() => { throw new Error('no time'); }] }) }] });
    const error = await Runner.run(agent, 'go').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginError);
    expect(error).toMatchObject({ message: "Plugin 'clock' of agent 'a': view injector failed: no time", plugin: 'clock', agent: 'a', stage: 'view' });
  });

  it('hooks and guardrails of plugins apply while their agent is active, after the agent\'s own', async () => {
    const seen: string[] = [];
    const watch = (who: string) => ({ afterModelResponse: (_r: unknown, ctx: { agent: { name: string } }) => void seen.push(`${who} sees ${ctx.agent.name}`) });
    const model = new ScriptedModel([call('transfer_to_b', {}, 'h1'), text('final from b')]);
    const b = new Agent({
      name: 'b',
      model,
      hooks: watch('b-own'),
      plugins: [{ name: 'pb', setup: () => ({ hooks: [watch('pb')], outputGuardrails: [function noFinal(output: unknown) { seen.push(`pb output ${String(output)}`); return { tripwire: true, info: 'nope' }; }] }) }],
    });
    const a = new Agent({
      name: 'a',
      model,
      handoffs: [b],
      hooks: watch('a-own'),
      plugins: [{ name: 'pa', setup: () => ({ hooks: watch('pa'), inputGuardrails: [(input) => (seen.push(`pa input ${input.length}`), { tripwire: false })], outputGuardrails: [() => (seen.push('pa output'), { tripwire: true })] }) }],
    });
    const error = await Runner.run(a, 'go').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GuardrailTripped);
    expect(error).toMatchObject({ guardrail: 'noFinal', info: 'nope' });
    expect(seen).toEqual(['pa input 1', 'a-own sees a', 'pa sees a', 'b-own sees b', 'pb sees b', 'pb output final from b']);
  });

  it('a setup that throws fails the run with a PluginError naming it; the setups before it are closed, later ones never run', async () => {
    const log: string[] = [];
    const boom: Plugin = { name: 'boom', setup: () => { throw new Error('no key'); } };
    const agent = new Agent({ name: 'a', model: new ScriptedModel([text('never')]), plugins: [logged('first', log), boom, logged('never', log)] });
    const events = await run(agent, log);
    const error = (events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>).error;
    expect(error).toBeInstanceOf(PluginError);
    expect(error).toMatchObject({ message: "Plugin 'boom' of agent 'a': setup failed: no key", plugin: 'boom', stage: 'setup' });
    expect(log).toEqual(['run_started', 'setup first (a)', 'close first', 'run_failed']);
    // A malformed result is a PluginError too.
    const bad = new Agent({ name: 'a', model: new ScriptedModel([]), plugins: [{ name: 'bad', setup: () => ({ tools: 'x' }) as never }] });
    await expect(Runner.run(bad, 'go')).rejects.toThrow("Plugin 'bad' of agent 'a': setup failed: setup returned 'tools' that is not an array");
  });

  it('a handoff target whose setup throws fails the run after the handoff; the first agent\'s plugins are closed', async () => {
    const log: string[] = [];
    const b = new Agent({ name: 'b', model: new ScriptedModel([]), plugins: [{ name: 'pb', setup: async () => { throw new Error('offline'); } }] });
    const a = new Agent({ name: 'a', model: new ScriptedModel([call('transfer_to_b', {}, 'h1')]), handoffs: [b], plugins: [logged('pa', log)] });
    const events = await run(a, log);
    expect((events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>).error.message).toBe("Plugin 'pb' of agent 'b': setup failed: offline");
    expect(log).toEqual(['run_started', 'setup pa (a)', 'turn_started', 'message_completed', 'tool_call_started:h1', 'tool_call_completed:h1', 'turn_ended', 'handoff_occurred', 'run_failed', 'close pa']);
  });

  it('close is called exactly once on each ending: completed, failed, cancelled, suspended', async () => {
    const endings: Record<string, string[]> = {};
    const agentWith = (model: ScriptedModel, log: string[], tools = [named('own')]) => new Agent({ name: 'a', model, tools, approvalHandler: () => 'ask', plugins: [logged('p', log)] });

    endings.completed = [];
    await Runner.run(agentWith(new ScriptedModel([text('ok')]), endings.completed), 'go');

    endings.failed = [];
    await Runner.run(agentWith(new ScriptedModel([]), endings.failed), 'go').catch(() => undefined);

    endings.cancelled = [];
    const started = deferred<void>();
    const slow = tool({ name: 'slow', description: 'd', parameters: z.object({}), execute: (_a, ctx) => new Promise((resolve) => { started.resolve(); ctx.signal.addEventListener('abort', () => resolve('stopped')); }) });
    const handle = Runner.stream(agentWith(new ScriptedModel([call('slow', {}, 's1')]), endings.cancelled, [slow]), 'go');
    await started.promise;
    handle.cancel('user left');
    await handle.result().catch(() => undefined);

    endings.suspended = [];
    const gated = tool({ name: 'gated', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => 'ran' });
    const store = new MemoryCheckpointStore();
    const parked = await Runner.run(agentWith(new ScriptedModel([call('gated', {}, 'g1')]), endings.suspended, [gated]), 'go', { checkpoint: { store, runId: 'p1', suspendOnWait: true } }).catch((e: unknown) => e);
    expect(parked).toBeInstanceOf(RunSuspended);

    expect(endings).toEqual({ completed: ['setup p (a)', 'close p'], failed: ['setup p (a)', 'close p'], cancelled: ['setup p (a)', 'close p'], suspended: ['setup p (a)', 'close p'] });

    // Resuming a durable run sets its plugins up again (plugins are code, not state), told it is resumed.
    const resumedLog: string[] = [];
    await Runner.decide(store, 'p1', 'p1:1.0', { approved: true });
    const resumed = await Runner.resume(agentWith(new ScriptedModel([text('after')]), resumedLog, [gated]), { store, runId: 'p1' }).result();
    expect(resumed.output).toBe('after');
    expect(resumedLog).toEqual(['setup p (a, resumed)', 'close p']);
  });

  it('a close that throws is reported as a process warning; the other closes still run and the outcome is unchanged', async () => {
    const log: string[] = [];
    const warned = new Promise<Error & { code?: string }>((resolve) => process.once('warning', resolve));
    const broken: Plugin = { name: 'broken', setup: () => ({ close: () => { throw new Error('socket gone'); } }) };
    const result = await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([text('fine')]), plugins: [logged('first', log), broken] }), 'go');
    expect(result.output).toBe('fine');
    expect(log).toEqual(['setup first (a)', 'close first']);
    const warning = await warned;
    expect([warning.message, warning.code]).toEqual(["Plugin 'broken' of agent 'a': close failed: socket gone", 'TROUPE_PLUGIN_CLOSE']);
  });

  it('a run cancelled while a setup runs closes that setup once it returns', async () => {
    const log: string[] = [];
    const gate = deferred<void>();
    const slow: Plugin = { name: 'slow', setup: async (ctx) => { log.push('setup slow'); await gate.promise; log.push(`setup returns (aborted: ${ctx.signal.aborted})`); return { close: () => void log.push('close slow') }; } };
    const handle = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([text('never')]), plugins: [slow] }), 'go');
    const events: string[] = [];
    handle.on('*', (e) => void events.push(e.type));
    while (log.length === 0) await new Promise((r) => setTimeout(r, 0));
    handle.cancel('stop');
    await handle.result().catch(() => undefined);
    expect(events).toEqual(['run_started', 'run_failed']);
    gate.resolve();
    while (log.length < 3) await new Promise((r) => setTimeout(r, 0));
    expect(log).toEqual(['setup slow', 'setup returns (aborted: true)', 'close slow']);
  });

  it('mcpPlugin connects the server when its agent becomes active and closes it when the run ends', async () => {
    const fixture = fileURLToPath(new URL('../fixtures/mcp/stdio-server.mjs', import.meta.url));
    const plugin = mcpPlugin({ name: 'fx', command: process.execPath, args: [fixture], tools: ['add'] });
    // Watches the plugin: when its setup ran, and the tools it gave (to call them after the run).
    const log: string[] = [];
    let given: PluginSetup | undefined;
    const watched: Plugin = { name: plugin.name, setup: async (ctx) => (log.push(`connect (${ctx.agent.name})`), (given = (await plugin.setup(ctx)) as PluginSetup)) };
    const model = new ScriptedModel([call('transfer_to_calc', {}, 'h1'), call('fx__add', { a: 2, b: 3 }, 'c1'), text('five')]);
    const calc = new Agent({ name: 'calc', model, plugins: [watched] });
    const front = new Agent({ name: 'front', model, handoffs: [calc] });
    const events = await run(front, log);
    expect(events.at(-1)).toMatchObject({ type: 'run_completed', output: 'five' });
    expect(events.find((e) => e.type === 'tool_call_completed' && e.call.id === 'c1')).toMatchObject({ output: '5', isError: false });
    expect(log.slice(0, 9)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_started:h1', 'tool_call_completed:h1', 'turn_ended', 'handoff_occurred', 'connect (calc)', 'turn_started']);
    expect(model.requests.map((r) => r.tools.map((t) => t.name))).toEqual([['transfer_to_calc'], ['fx__add'], ['fx__add']]);
    // The run closed the connection: the server's tool now says so.
    const after = await Runner.run(new Agent({ name: 'x', model: new ScriptedModel([call('fx__add', { a: 1, b: 1 }, 'c2'), text('x')]), tools: [...given!.tools!] }), 'go');
    expect(after.transcript[2]).toMatchObject({ role: 'tool', content: "Tool error: MCP server 'fx' failed on tool 'add': the server connection was closed", isError: true });
  });
});
