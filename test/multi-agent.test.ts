import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, BudgetExceeded, Runner, handoff, tool, type RunEvent } from '../src/index.js';
import { ScriptedModel, batch, call, text } from '../src/entry/testing.js';
import { collect, completed, deferred, flush } from './helpers.js';

/** "type[@path]" for every non-delta event, with tool call ids. */
function flow(events: readonly RunEvent[]): string[] {
  return events
    .filter((e) => e.type !== 'text_delta')
    .map((e) => `${e.type}${'call' in e ? `:${e.call.id}` : ''}@${e.path.join('>')}`);
}

describe('handoffs', () => {
  it('transfers after the turn: turn_ended → handoff_occurred → turn_started, transcript kept, system prompt changed', async () => {
    const billing = new Agent({ name: 'Billing', instructions: 'You handle invoices.', model: new ScriptedModel([text('Your invoice is resent.')]) });
    const triageModel = new ScriptedModel([call('transfer_to_billing', { reason: 'invoice question' }, 'h1')]);
    const triage = new Agent({ name: 'Triage', instructions: 'Route requests.', model: triageModel, handoffs: [billing] });
    const handle = Runner.stream(triage, 'Resend my invoice');
    const events = await collect(handle);
    expect(flow(events)).toEqual([
      'run_started@Triage',
      'turn_started@Triage',
      'message_completed@Triage',
      'tool_call_started:h1@Triage',
      'tool_call_completed:h1@Triage',
      'turn_ended@Triage',
      'handoff_occurred@Billing',
      'turn_started@Billing',
      'message_completed@Billing',
      'turn_ended@Billing',
      'run_completed@Billing',
    ]);
    expect(completed(events)[0]!.output).toBe('Transferred to Billing (invoice question)');
    expect(events.find((e) => e.type === 'handoff_occurred')).toMatchObject({ from: 'Triage', to: 'Billing', turn: 1 });
    const billingModel = billing.model as ScriptedModel;
    expect(billingModel.requests[0]!.system).toBe('You handle invoices.');
    expect(billingModel.requests[0]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(triageModel.requests[0]!.tools.map((t) => t.name)).toEqual(['transfer_to_billing']);
    const result = await handle.result();
    expect(result.agent).toBe('Billing');
    expect(result.output).toBe('Your invoice is resent.');
  });

  it('lets only the first handoff of a turn through; the loser never runs onHandoff', async () => {
    const ran: string[] = [];
    const a = new Agent({ name: 'A', model: new ScriptedModel([text('A here')]) });
    const b = new Agent({ name: 'B', model: new ScriptedModel([text('B here')]) });
    const triage = new Agent({
      name: 'T',
      model: new ScriptedModel([batch([['transfer_to_a', {}, 'x'], ['transfer_to_b', { reason: 'second' }, 'y']])]),
      handoffs: [handoff(a, { onHandoff: () => void ran.push('A') }), handoff(b, { onHandoff: () => void ran.push('B') })],
    });
    const handle = Runner.stream(triage, 'q');
    const events = await collect(handle);
    expect(ran).toEqual(['A']);
    expect(completed(events).map((e) => [e.call.id, e.output])).toEqual([
      ['x', 'Transferred to A'],
      ['y', "Handoff not performed: this turn already transferred to 'A'. Only the first handoff in a turn takes effect."],
    ]);
    expect((await handle.result()).output).toBe('A here');
  });

  it('hands back and forth A → B → A with one shared transcript', async () => {
    const a = new Agent({ name: 'A', model: new ScriptedModel([call('transfer_to_b', {}, 'h1'), text('A again')]) });
    const b = new Agent({ name: 'B', model: new ScriptedModel([call('transfer_to_a', {}, 'h2')]), handoffs: [a] });
    a.handoffs.push(b);
    const handle = Runner.stream(a, 'ping');
    const events = await collect(handle);
    expect(events.filter((e) => e.type === 'handoff_occurred').map((e) => `${(e as { from: string }).from}→${(e as { to: string }).to}`)).toEqual(['A→B', 'B→A']);
    const result = await handle.result();
    expect(result.output).toBe('A again');
    expect(result.transcript.map((m) => `${m.role}${m.role === 'assistant' ? `:${m.agent}` : ''}`)).toEqual(['user', 'assistant:A', 'tool', 'assistant:B', 'tool', 'assistant:A']);
  });

  it('applies inputFilter to the transcript the target sees', async () => {
    const b = new Agent({ name: 'B', model: new ScriptedModel([text('ok')]) });
    const a = new Agent({ name: 'A', model: new ScriptedModel([call('transfer_to_b', {}, 'h')]), handoffs: [handoff(b, { inputFilter: (t) => t.filter((m) => m.role === 'user') })] });
    await Runner.run(a, 'only me');
    expect((b.model as ScriptedModel).requests[0]!.messages).toEqual([{ role: 'user', content: 'only me' }]);
  });

  it('a throwing onHandoff cancels the transfer and reports a tool error', async () => {
    const b = new Agent({ name: 'B', model: new ScriptedModel([text('never')]) });
    const a = new Agent({ name: 'A', model: new ScriptedModel([call('transfer_to_b', {}, 'h'), text('stayed')]), handoffs: [handoff(b, { onHandoff: () => { throw new Error('B is closed'); } })] });
    const handle = Runner.stream(a, 'q');
    const events = await collect(handle);
    expect(completed(events)[0]!.output).toBe('Tool error: B is closed');
    expect(events.some((e) => e.type === 'handoff_occurred')).toBe(false);
    expect((await handle.result()).output).toBe('stayed');
  });
});

describe('agents as tools', () => {
  const researchAgent = (steps: ConstructorParameters<typeof ScriptedModel>[0], tools = [] as ReturnType<typeof tool>[]) =>
    new Agent({ name: 'Research', instructions: 'Find facts.', model: new ScriptedModel(steps), tools });

  it('runs the sub-agent as a child run: its events reach the root stream with a longer path', async () => {
    const lookup = tool({ name: 'lookup', description: 'd', parameters: z.object({ q: z.string() }), execute: ({ q }) => `fact about ${q}` });
    const research = researchAgent([call('lookup', { q: 'otters' }, 'r1', { usage: { inputTokens: 7, outputTokens: 3 } }), text('Otters hold hands.', { usage: { inputTokens: 9, outputTokens: 4 } })], [lookup]);
    const lead = new Agent({
      name: 'Lead',
      model: new ScriptedModel([call('ask_research', { input: 'otters?' }, 'a1', { usage: { inputTokens: 10, outputTokens: 5 } }), text('They hold hands.', { usage: { inputTokens: 20, outputTokens: 2 } })]),
      tools: [research.asTool()],
    });
    const handle = Runner.stream(lead, 'Tell me about otters');
    const events = await collect(handle);
    expect(flow(events)).toEqual([
      'run_started@Lead',
      'turn_started@Lead',
      'message_completed@Lead',
      'tool_call_started:a1@Lead',
      'run_started@Lead>Research',
      'turn_started@Lead>Research',
      'message_completed@Lead>Research',
      'tool_call_started:r1@Lead>Research',
      'tool_call_completed:r1@Lead>Research',
      'turn_ended@Lead>Research',
      'turn_started@Lead>Research',
      'message_completed@Lead>Research',
      'turn_ended@Lead>Research',
      'run_completed@Lead>Research',
      'tool_call_completed:a1@Lead',
      'turn_ended@Lead',
      'turn_started@Lead',
      'message_completed@Lead',
      'turn_ended@Lead',
      'run_completed@Lead',
    ]);
    const a1 = completed(events).find((e) => e.call.id === 'a1')!;
    expect(a1.output).toBe('Otters hold hands.');
    expect(a1.details).toMatchObject({ runId: `${events[0]!.runId}/1.0`, agent: 'Research', turns: 2 });
    expect((research.model as ScriptedModel).requests[0]!.messages).toEqual([{ role: 'user', content: 'otters?' }]);
    // The child's usage folds into the parent's.
    expect((await handle.result()).usage).toEqual({ inputTokens: 46, outputTokens: 14, totalTokens: 60, requests: 4 });
  });

  it('turns the sub-run failure into a tool error and folds its usage anyway; the parent continues', async () => {
    const loop = tool({ name: 'loop', description: 'd', parameters: z.object({}), execute: () => 'again' });
    const research = researchAgent([call('loop', {}, 'l1', { usage: { inputTokens: 5, outputTokens: 5 } }), call('loop', {}, 'l2', { usage: { inputTokens: 5, outputTokens: 5 } })], [loop]);
    const lead = new Agent({
      name: 'Lead',
      model: new ScriptedModel([call('ask_research', { input: 'go' }, 'a1', { usage: { inputTokens: 1, outputTokens: 1 } }), text('gave up', { usage: { inputTokens: 1, outputTokens: 1 } })]),
      tools: [research.asTool({ maxTurns: 1 })],
    });
    const handle = Runner.stream(lead, 'q');
    const events = await collect(handle);
    expect(events.filter((e) => e.type === 'run_failed').map((e) => e.path.join('>'))).toEqual(['Lead>Research']);
    expect(completed(events).find((e) => e.call.id === 'a1')!.output).toBe("Tool error: agent 'Research' failed: max turns 1 exceeded");
    const result = await handle.result();
    expect(result.output).toBe('gave up');
    expect(result.usage).toEqual({ inputTokens: 7, outputTokens: 7, totalTokens: 14, requests: 3 });
  });

  it('its own BudgetExceeded is a tool error for the parent', async () => {
    const research = researchAgent([text('long answer', { usage: { inputTokens: 1, outputTokens: 30 } })]);
    const lead = new Agent({ name: 'Lead', model: new ScriptedModel([call('ask_research', { input: 'go' }, 'a1'), text('fine')]), tools: [research.asTool({ budget: { maxOutputTokens: 10 } })] });
    const result = await Runner.run(lead, 'q');
    expect(result.output).toBe('fine');
    expect(result.transcript[2]).toMatchObject({ isError: true, content: "Tool error: agent 'Research' failed: output tokens 30 exceeds budget 10" });
  });

  it("stops the parent with BudgetExceeded when the child's spend exhausts the parent budget", async () => {
    const research = researchAgent([text('expensive', { usage: { inputTokens: 1, outputTokens: 60 } })]);
    const lead = new Agent({ name: 'Lead', model: new ScriptedModel([call('ask_research', { input: 'go' }, 'a1', { usage: { inputTokens: 1, outputTokens: 5 } }), text('never')]), tools: [research.asTool()] });
    const handle = Runner.stream(lead, 'q', { budget: { maxOutputTokens: 50 } });
    const events = await collect(handle);
    // The child sees the parent's remainder as its limit and fails; the parent stops at its next safe point.
    expect(events.filter((e) => e.type === 'run_failed').map((e) => `${e.path.join('>')}: ${(e as { error: Error }).error.message}`)).toEqual([
      'Lead>Research: output tokens 65 exceeds budget 50',
      'Lead: output tokens 65 exceeds budget 50',
    ]);
    const error = await handle.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExceeded);
    expect((lead.model as ScriptedModel).requests).toHaveLength(1);
  });

  it('counts the child tool calls against the parent maxToolCalls', async () => {
    const t = tool({ name: 't', description: 'd', parameters: z.object({}), execute: () => 'ok' });
    const research = researchAgent([batch([['t', {}, 'c1'], ['t', {}, 'c2'], ['t', {}, 'c3']]), text('done')], [t]);
    const lead = new Agent({ name: 'Lead', model: new ScriptedModel([call('ask_research', { input: 'go' }, 'a1'), text('never')]), tools: [research.asTool()] });
    const handle = Runner.stream(lead, 'q', { budget: { maxToolCalls: 3 } });
    const events = await collect(handle);
    // a1 is call 1 of the parent's budget, c1 and c2 are calls 2 and 3: c3 is the one too many.
    expect(completed(events).map((e) => `${e.call.id}: ${e.output}`)).toEqual([
      'c3: Tool error: tool call count 4 exceeds budget 3',
      'c1: ok',
      'c2: ok',
      "a1: Tool error: agent 'Research' failed: tool call count 4 exceeds budget 3",
    ]);
    await expect(handle.result()).rejects.toThrow('tool call count 4 exceeds budget 3');
  });

  it('cancelling the parent cancels the child and its tools', async () => {
    const aborted: string[] = [];
    const hang = tool({ name: 'hang', description: 'd', parameters: z.object({}), execute: (_a, ctx) => new Promise((r) => ctx.signal.addEventListener('abort', () => { aborted.push(ctx.callId); r('x'); })) });
    const research = researchAgent([call('hang', {}, 'h1')], [hang]);
    const lead = new Agent({ name: 'Lead', model: new ScriptedModel([call('ask_research', { input: 'go' }, 'a1')]), tools: [research.asTool()] });
    const handle = Runner.stream(lead, 'q');
    const reading = collect(handle);
    await flush();
    handle.cancel('user left');
    const events = await reading;
    await flush();
    expect(aborted).toEqual(['h1']);
    expect(events.at(-1)).toMatchObject({ type: 'run_failed', path: ['Lead'] });
    await expect(handle.result()).rejects.toThrow('Run cancelled: user left');
  });

  it('bubbles approvals from a sub-run to the root stream and handle', async () => {
    const ran: string[] = [];
    const gated = tool({ name: 'gated', description: 'd', parameters: z.object({}), needsApproval: true, execute: (_a, ctx) => { ran.push(ctx.callId); return 'done'; } });
    const makeLead = () =>
      new Agent({
        name: 'Lead',
        model: new ScriptedModel([call('ask_research', { input: 'go' }, 'a1'), text('ok')]),
        tools: [researchAgent([call('gated', {}, 'g1'), text('child ok')], [gated]).asTool()],
      });
    const handle = Runner.stream(makeLead(), 'q');
    const approvals: string[] = [];
    await collect(handle, (e) => {
      if (e.type === 'approval_required') {
        approvals.push(`${e.call.id}@${e.path.join('>')}`);
        e.approve();
      }
    });
    expect(approvals).toEqual(['g1@Lead>Research']);
    expect(ran).toEqual(['g1']);

    // Fail closed: Runner.run without a handler denies the child's gated call.
    const result = await Runner.run(makeLead(), 'q');
    expect(ran).toEqual(['g1']);
    expect(result.output).toBe('ok');

    // And through handle.approvals while the consumer keeps reading.
    const asking = makeLead();
    const inner = (asking.tools[0]!);
    expect(inner.name).toBe('ask_research');
    const h2 = Runner.stream(new Agent({ name: 'Lead', model: new ScriptedModel([call('ask_research', { input: 'go' }, 'a1'), text('ok')]), tools: [new Agent({ name: 'Research', model: new ScriptedModel([call('gated', {}, 'g2'), text('child ok')]), tools: [gated], approvalHandler: () => 'ask' }).asTool()] }), 'q');
    const reading = collect(h2);
    await flush();
    expect(h2.approvals.pending().map((p) => [p.callId, p.runId])).toEqual([['g2', `${h2.runId}/1.0`]]);
    expect(h2.approvals.approve('g2')).toBe(true);
    await reading;
    expect(ran).toEqual(['g1', 'g2']);
  });

  it('nests three levels deep and supports a handoff inside a sub-run', async () => {
    const fact = tool({ name: 'fact', description: 'd', parameters: z.object({}), execute: () => 'deep fact' });
    const deep = new Agent({ name: 'Deep', model: new ScriptedModel([call('fact', {}, 'f1'), text('deep answer')]), tools: [fact] });
    const writer = new Agent({ name: 'Writer', model: new ScriptedModel([text('written: deep answer')]) });
    const middle = new Agent({ name: 'Middle', model: new ScriptedModel([call('ask_deep', { input: 'dig' }, 'm1'), call('transfer_to_writer', {}, 'm2')]), tools: [deep.asTool()], handoffs: [writer] });
    const top = new Agent({ name: 'Top', model: new ScriptedModel([call('ask_middle', { input: 'go' }, 't1'), text('final')]), tools: [middle.asTool()] });
    const handle = Runner.stream(top, 'q');
    const events = await collect(handle);
    const paths = [...new Set(events.map((e) => e.path.join('>')))];
    expect(paths).toEqual(['Top', 'Top>Middle', 'Top>Middle>Deep', 'Top>Writer']);
    expect(flow(events).filter((f) => f.includes('f1') || f.startsWith('handoff') || f.startsWith('run_'))).toEqual([
      'run_started@Top',
      'run_started@Top>Middle',
      'run_started@Top>Middle>Deep',
      'tool_call_started:f1@Top>Middle>Deep',
      'tool_call_completed:f1@Top>Middle>Deep',
      'run_completed@Top>Middle>Deep',
      'handoff_occurred@Top>Writer',
      'run_completed@Top>Writer',
      'run_completed@Top',
    ]);
    expect(completed(events).find((e) => e.call.id === 't1')!.output).toBe('written: deep answer');
    expect((await handle.result()).output).toBe('final');
  });

  it('shows sub-runs as actors in the XState tree under their tool-call actor', async () => {
    const gate = deferred<string>();
    const wait = tool({ name: 'wait', description: 'd', parameters: z.object({}), execute: () => gate.promise });
    const research = researchAgent([call('wait', {}, 'w1'), text('ok')], [wait]);
    const lead = new Agent({ name: 'Lead', model: new ScriptedModel([call('ask_research', { input: 'go' }, 'a1'), text('done')]), tools: [research.asTool()] });
    const edges: string[] = [];
    const handle = Runner.stream(lead, 'q', {
      runId: 'root',
      inspect: (event) => {
        if (event.type === '@xstate.actor') {
          const ref = event.actorRef as unknown as { id: string; _parent?: { id: string } };
          edges.push(`${ref.id} < ${ref._parent?.id ?? '(root)'}`);
        }
      },
    });
    const reading = collect(handle);
    await flush();
    // run → executor (made with the run's first call) → tool call → sub-run → its executor → its tool call
    // Tool-call actors are keyed <turn>.<index> (model call ids may repeat); sub-runs <parent>/<turn>.<index>.
    expect(edges).toEqual(['root < (root)', 'tools < root', '1.0 < tools', 'root/1.0 < 1.0', 'tools < root/1.0', '1.0 < tools']);
    gate.resolve('x');
    await reading;
  });
});
