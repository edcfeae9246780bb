import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, UserError, tool } from '../../src/index.js';
import { ExplorationNondeterminism, ScriptedModel, call, coverageTable, exploreAgent, text } from '../../src/entry/testing.js';

const lookup = tool({ name: 'lookup', description: 'Look up an order.', parameters: z.object({ order: z.string() }), execute: async () => 'found' });
const refund = tool({ name: 'refund', description: 'Refund an order.', parameters: z.object({ order: z.string(), cents: z.number().int().min(1) }), needsApproval: true, execute: async () => 'refunded' });
const desk = (model = new ScriptedModel([])) => new Agent({ name: 'Desk', model, tools: [lookup, refund] });

describe('exploreAgent: every path of one agent', () => {
  it('walks every reply, tool outcome, approval decision and cancel, depth-first, on the real runtime', async () => {
    const model = new ScriptedModel([]);
    const exploration = await exploreAgent(desk(model), { maxCallsPerRun: 1 });
    expect(exploration.paths.map((p) => `${p.outcome} ${p.name}`)).toEqual([
      'completed Desk reply 1: text',
      'completed Desk reply 1: call lookup › lookup Desk_call_1: returns › Desk reply 2: text',
      'completed Desk reply 1: call lookup › lookup Desk_call_1: throws › Desk reply 2: text',
      'cancelled Desk reply 1: call lookup › lookup Desk_call_1: throws › Desk reply 2: cancel',
      'cancelled Desk reply 1: call lookup › lookup Desk_call_1: cancel',
      'cancelled Desk reply 1: call lookup › lookup Desk_call_1: returns › Desk reply 2: cancel',
      'completed Desk reply 1: call refund › approve refund Desk_call_1: approved › refund Desk_call_1: returns › Desk reply 2: text',
      'completed Desk reply 1: call refund › approve refund Desk_call_1: denied › Desk reply 2: text',
      'cancelled Desk reply 1: call refund › approve refund Desk_call_1: denied › Desk reply 2: cancel',
      'cancelled Desk reply 1: call refund › approve refund Desk_call_1: cancel',
      'completed Desk reply 1: call refund › approve refund Desk_call_1: approved › refund Desk_call_1: throws › Desk reply 2: text',
      'cancelled Desk reply 1: call refund › approve refund Desk_call_1: approved › refund Desk_call_1: throws › Desk reply 2: cancel',
      'cancelled Desk reply 1: call refund › approve refund Desk_call_1: approved › refund Desk_call_1: cancel',
      'cancelled Desk reply 1: call refund › approve refund Desk_call_1: approved › refund Desk_call_1: returns › Desk reply 2: cancel',
      'cancelled Desk reply 1: cancel',
    ]);
    expect(exploration.truncated).toBe(false);
    expect(exploration.failures).toEqual([]);
    // The denied refund: its call never ran, its result is the denial, and the model saw it.
    const denied = exploration.paths[7]!;
    expect(denied.steps).toEqual([
      'Desk run_started',
      'Desk turn_started 1',
      'Desk message_completed calls refund',
      'Desk approval_required refund',
      'Desk tool_call_completed refund error',
      'Desk turn_ended 1',
      'Desk turn_started 2',
      'Desk message_completed text',
      'Desk turn_ended 2',
      'Desk run_completed',
    ]);
    expect(denied.events.find((e) => e.type === 'tool_call_completed')).toMatchObject({ output: "Tool error: approval denied for tool 'refund': denied by exploration", isError: true });
    expect(denied.result).toBe('Desk answers.');
    // The generated arguments are valid for the schema (cents >= 1).
    expect(denied.events.find((e) => e.type === 'approval_required')).toMatchObject({ args: { order: 'x', cents: 1 } });
    // The cancel at the first reply: the run fails with RunCancelled and nothing else is asked.
    expect(exploration.paths[14]!.result).toBe('RunCancelled: Run cancelled: exploration: cancel at Desk reply 1');
    // The user's agent, model and tools are untouched: its model was never asked.
    expect(model.requests).toEqual([]);
  });

  it('explores scripted replies, retries, tool timeouts and event waits that arrive or time out', async () => {
    const pay = tool({ name: 'pay', description: 'Pay.', parameters: z.object({ cents: z.number() }), timeoutMs: 5, retries: 1, execute: async () => 'paid' });
    const shop = new Agent({ name: 'Shop', model: new ScriptedModel([]), tools: [pay] });
    const exploration = await exploreAgent(shop, {
      replies: { Shop: [call('pay', { cents: 100 }, 'p1'), text('done')] },
      tools: { pay: [{ waitsForEvent: 'paid', payload: { ok: true } }, { timesOut: true }, { throws: 'card declined' }] },
      cancels: false,
    });
    const outcomes = (p: (typeof exploration.paths)[number]) => p.choices.filter((c) => c.at.startsWith('pay')).map((c) => c.options[c.took]).join(', ');
    expect(exploration.paths.map(outcomes)).toEqual([
      'wait resolved',
      'wait timed out',
      'times out, wait resolved',
      'times out, wait timed out',
      'times out, times out',
      'times out, throws',
      'throws, wait resolved',
      'throws, wait timed out',
      'throws, times out',
      'throws, throws',
    ]);
    const results = exploration.paths.map((p) => p.events.find((e) => e.type === 'tool_call_completed')).map((e) => (e as { output: string } | undefined)?.output);
    expect(results[0]).toBe('{"ok":true}');
    expect(results[1]).toBe("Tool error: event 'paid' did not arrive within 1 ms");
    expect(results[9]).toBe('Tool error: card declined');
    expect(exploration.paths[1]!.steps.slice(3, 8)).toEqual(['Shop tool_call_started pay', 'Shop wait_opened event', 'Shop wait_resolved timed out', 'Shop tool_call_failed pay attempt 1', 'Shop tool_call_completed pay error']);
    expect(exploration.paths.every((p) => p.outcome === 'completed' && p.result === 'done')).toBe(true);
    expect(exploration.failures).toEqual([]);
    expect(exploration.coverage.agents).toEqual([{ agent: 'Shop', tools: { pay: { ok: 3, error: 7 } }, handoffs: {}, approvals: { approved: 0, denied: 0 }, waits: { resolved: 3, timedOut: 3 } }]);
  });

  it('takes no real time for timeouts and retry backoff: an hour-long timeout and ten retries (26 s of backoff) explore at once', async () => {
    // Without the explorer's instant timeouts and zero backoff this path would take an hour (the
    // path timeout would cancel it after 10 s, a violation) or 26.3 s of backoff (past the test's timeout).
    const pay = tool({ name: 'pay', description: 'Pay.', parameters: z.object({ cents: z.number() }), timeoutMs: 3_600_000, retries: 10, execute: async () => 'paid' });
    const shop = new Agent({ name: 'Shop', model: new ScriptedModel([]), tools: [pay] });
    const exploration = await exploreAgent(shop, { replies: { Shop: [call('pay', { cents: 100 }, 'p1'), text('done')] }, tools: { pay: [{ timesOut: true }] }, cancels: false });
    expect(exploration.paths).toHaveLength(1);
    const [path] = exploration.paths;
    const failed = path!.events.filter((e) => e.type === 'tool_call_failed') as Array<{ attempt: number; willRetry: boolean; error: Error }>;
    expect(failed.map((e) => `${e.attempt} ${e.willRetry} ${e.error.name}: ${e.error.message}`)).toEqual(
      Array.from({ length: 11 }, (_, i) => `${i + 1} ${i < 10} ToolTimeout: tool 'pay' timed out after 3600000 ms`),
    );
    expect(path!.events.find((e) => e.type === 'tool_call_completed')).toMatchObject({ isError: true, output: "Tool error: tool 'pay' timed out after 3600000 ms" });
    expect([path!.outcome, path!.result]).toEqual(['completed', 'done']);
    expect(exploration.failures).toEqual([]);
  });

  it("explores a sub-run that runs out of its own budget: a reply over it, at every reply of the agent tool's sub-run", async () => {
    const weather = tool({ name: 'weather', description: 'Weather.', parameters: z.object({ city: z.string() }), execute: async () => 'sunny' });
    const research = new Agent({ name: 'Research', model: new ScriptedModel([]), tools: [weather] });
    const lead = new Agent({ name: 'Lead', model: new ScriptedModel([]), tools: [research.asTool({ budget: { maxTotalTokens: 50 }, maxTurns: 3 })] });
    const exploration = await exploreAgent(lead, { maxCallsPerRun: 1, cancels: false });
    expect(exploration.paths.map((p) => `${p.outcome} ${p.name}`)).toEqual([
      'completed Lead reply 1: text',
      'completed Lead reply 1: call ask_research › Research reply 1: text',
      'completed Lead reply 1: call ask_research › Research reply 1: call weather › weather Research_call_1: returns › Research reply 2: text',
      'completed Lead reply 1: call ask_research › Research reply 1: call weather › weather Research_call_1: throws › Research reply 2: text',
      'completed Lead reply 1: call ask_research › Research reply 1: call weather › weather Research_call_1: throws › Research reply 2: over budget',
      'completed Lead reply 1: call ask_research › Research reply 1: call weather › weather Research_call_1: returns › Research reply 2: over budget',
      'completed Lead reply 1: call ask_research › Research reply 1: over budget',
    ]);
    // The sub-run's first reply spent 51 tokens, one over its budget: the runtime stopped it, and the lead got a tool error.
    const over = exploration.paths[6]!;
    const sub = over.events.find((e) => e.type === 'run_failed')!;
    expect([sub.runId.endsWith('/1.0'), (sub as { error: Error }).error.name, (sub as { error: Error }).error.message]).toEqual([true, 'BudgetExceeded', 'total tokens 51 exceeds budget 50']);
    expect(over.events.find((e) => e.type === 'tool_call_completed')).toMatchObject({ isError: true, output: "Tool error: agent 'Research' failed: total tokens 51 exceeds budget 50" });
    expect(exploration.failures).toEqual([]);
    expect(exploration.coverage.chart.transitions.find((t) => t.id === 'run.turn.model model.replied#1 [replyOverBudget] -> run.stopping')!.count).toBe(3);
    // The root's own budget (runOptions.budget) is explored the same way.
    const rooted = await exploreAgent(lead, { maxCallsPerRun: 0, cancels: false, runOptions: { budget: { maxOutputTokens: 20 } } });
    expect(rooted.paths.map((p) => `${p.outcome} ${p.name} ${p.result}`)).toEqual(['completed Lead reply 1: text Lead answers.', 'failed Lead reply 1: over budget BudgetExceeded: output tokens 21 exceeds budget 20']);
    expect(rooted.failures).toEqual([]);
  });

  it('cancelInStates: a cancel in every state a run comes to rest in, once per run and state, with the invariants checked on each path', async () => {
    const exploration = await exploreAgent(desk(), { maxCallsPerRun: 1, cancels: false, cancelInStates: true });
    expect(exploration.paths.map((p) => `${p.outcome} ${p.name}`)).toEqual([
      'completed Desk reply 1: text',
      'cancelled Desk in turn.model: cancel',
      'completed Desk reply 1: call lookup › lookup Desk_call_1: returns',
      'cancelled Desk reply 1: call lookup › Desk in turn.executing.draining: cancel',
      'completed Desk reply 1: call lookup › lookup Desk_call_1: throws',
      'completed Desk reply 1: call refund › approve refund Desk_call_1: approved › refund Desk_call_1: returns',
      'completed Desk reply 1: call refund › approve refund Desk_call_1: denied',
      'cancelled Desk reply 1: call refund › approve refund Desk_call_1: denied › Desk in turn.executing.approvalWait: cancel',
      'cancelled Desk reply 1: call refund › approve refund Desk_call_1: approved › Desk in turn.executing.approvalWait: cancel',
      'cancelled Desk reply 1: call refund › approve refund Desk_call_1: approved › Desk in turn.executing.draining: cancel',
      'completed Desk reply 1: call refund › approve refund Desk_call_1: approved › refund Desk_call_1: throws',
    ]);
    // Every path keeps every invariant: in particular no model is asked and no tool runs once the cancel arrived
    // (an approved call dispatched just before the cancel never starts).
    expect(exploration.failures).toEqual([]);
    // The cancel while the model is asked: nothing else happens.
    expect(exploration.paths[1]!.steps).toEqual(['Desk run_started', 'Desk turn_started 1', 'Desk run_failed RunCancelled']);
    // The cancel right after the approval: the refund gets the cancel as its result, and the run ends cancelled.
    expect(exploration.paths[8]!.steps).toEqual([
      'Desk run_started',
      'Desk turn_started 1',
      'Desk message_completed calls refund',
      'Desk approval_required refund',
      'Desk tool_call_started refund',
      'Desk tool_call_completed refund error',
      'Desk run_failed RunCancelled',
    ]);
    expect(exploration.paths[8]!.events.find((e) => e.type === 'tool_call_completed')).toMatchObject({ output: 'Tool error: run cancelled: exploration: cancel at Desk in turn.executing.approvalWait' });
    // The states offered: where this agent's runs rest (the others are passed through within one step).
    const offered = new Set(exploration.paths.flatMap((p) => p.choices.filter((c) => c.options.join() === 'go on,cancel').map((c) => c.at)));
    expect([...offered].sort()).toEqual(['Desk in turn.executing.approvalWait', 'Desk in turn.executing.draining', 'Desk in turn.model']);
  });

  it('refuses a scripted timeout for a tool that has none', async () => {
    await expect(exploreAgent(desk(), { tools: { lookup: [{ timesOut: true }] } })).rejects.toThrow(
      new UserError('exploreAgent: tools.lookup has { timesOut: true }, but the tool has no timeout (give it timeoutMs, or its agent defaultToolTimeoutMs).'),
    );
  });

  it('checks your invariants on every path and lists the failures shortest first', async () => {
    const exploration = await exploreAgent(desk(), {
      maxCallsPerRun: 2,
      cancels: false,
      invariants: [
        {
          name: 'no refund without a lookup first',
          check: (path) => {
            const names = path.events.flatMap((e) => (e.type === 'tool_call_started' ? [e.call.name] : []));
            return names[0] === 'refund' ? `refund ran first (${names.join(', ')})` : undefined;
          },
        },
      ],
    });
    expect(exploration.paths).toHaveLength(31);
    expect(exploration.failures.map((p) => p.index)).toEqual([14, 21, 18, 27, 30, 20, 22, 25, 28, 29, 23, 24, 31, 26]);
    expect(exploration.failures[0]!.name).toBe('Desk reply 1: call refund › approve refund Desk_call_1: approved › refund Desk_call_1: returns › Desk reply 2: text');
    expect(exploration.failures[0]!.violations).toEqual([{ invariant: 'no refund without a lookup first', message: 'refund ran first (refund)' }]);
    // Paths of equal length keep exploration order.
    const lengths = exploration.failures.map((p) => p.steps.length);
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
  });

  it('stops at maxPaths and says so', async () => {
    const exploration = await exploreAgent(desk(), { maxCallsPerRun: 1, maxPaths: 4 });
    expect(exploration.paths.map((p) => p.index)).toEqual([1, 2, 3, 4]);
    expect(exploration.truncated).toBe(true);
  });

  it('reports an agent system that goes differently for the same choices', async () => {
    // Gated on its second call only: the third path replays the second one's choices and meets an approval.
    let calls = 0;
    const fickle = tool({ name: 'fickle', description: 'd', parameters: z.object({}), needsApproval: () => ++calls === 2, execute: async () => 'ok' });
    const agent = new Agent({ name: 'A', model: new ScriptedModel([]), tools: [fickle] });
    const failure = await exploreAgent(agent, { maxCallsPerRun: 1 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ExplorationNondeterminism);
    expect(failure).toBeInstanceOf(UserError);
    expect((failure as Error).message).toBe(
      'exploreAgent: the same choices led elsewhere: choice 2 was "fickle A_call_1" (returns, throws, cancel) and is now "approve fickle A_call_1" (approved, denied, cancel). The agent system must behave the same for the same model replies and tool outcomes (no randomness, clocks or real I/O).',
    );
  });

  it('rejects malformed options with a UserError naming the option', async () => {
    await expect(exploreAgent(desk(), { maxPath: 3 } as never)).rejects.toThrow(/exploreAgent.*maxPath.*maxPaths/);
    await expect(exploreAgent(desk(), { maxPaths: 0 })).rejects.toThrow(new UserError('exploreAgent: maxPaths must be an integer >= 1, got 0.'));
    await expect(exploreAgent(desk(), { maxCallsPerRun: 1.5 })).rejects.toThrow(new UserError('exploreAgent: maxCallsPerRun must be an integer >= 0, got 1.5.'));
    await expect(exploreAgent(desk(), { invariants: [{ name: 'x' } as never] })).rejects.toThrow(new UserError('exploreAgent: each invariant needs a name (a string) and a check (a function of the path).'));
  });

  it('counts the chart states and transitions the paths went through', async () => {
    const exploration = await exploreAgent(desk(), { maxCallsPerRun: 1, cancels: false });
    const { chart } = exploration.coverage;
    const count = (id: string) => chart.states.find((s) => s.id === id)!.count;
    expect(exploration.paths).toHaveLength(6);
    expect(count('run.idle')).toBe(6);
    expect(count('run.turn.executing.approvalWait')).toBe(3);
    expect(count('run.completed')).toBe(6);
    expect(count('run.cancelled')).toBe(0);
    const taken = (id: string) => chart.transitions.find((t) => t.id === id)!.count;
    expect(taken('run.turn.executing.approvalWait xstate.done.actor.approval#0 [approvalDenied] -> run.turn.executing.preflight')).toBe(1);
    expect(taken('run.turn.executing.approvalWait xstate.done.actor.approval#4 -> run.turn.executing.preflight')).toBe(2);
    expect(chart.statesCovered).toBe(chart.states.filter((s) => s.count > 0).length);
    expect(coverageTable(exploration.coverage).split('\n')[0]).toBe(`run chart, 6 runs: states ${chart.statesCovered}/33 (${Math.round((chart.statesCovered / 33) * 100)}%), transitions ${chart.transitionsCovered}/${chart.transitions.length} (${Math.round((chart.transitionsCovered / chart.transitions.length) * 100)}%)`);
    // Plain data: JSON as it is.
    expect(JSON.parse(JSON.stringify(exploration.coverage))).toEqual(exploration.coverage);
  });
});
