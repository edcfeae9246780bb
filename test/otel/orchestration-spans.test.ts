import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../../src/agent.js';
import { ScriptedModel, batch, call, text } from '../../src/models/scripted.js';
import { Runner } from '../../src/runtime/runner.js';
import { tool } from '../../src/tools/tool.js';
import { collect, deferred, flush } from '../helpers.js';
import { isError, testTrace, times } from './otel-harness.js';

describe('OpenTelemetry spans: orchestration', () => {
  it('traces approval waits with the decision and who decided; a denied call gets an error span that never executed', async () => {
    const t = testTrace();
    const ran: string[] = [];
    const pay = tool({ name: 'pay', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => { ran.push('pay'); return 'paid'; } });
    const wipe = tool({ name: 'wipe', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => { ran.push('wipe'); return 'wiped'; } });
    const agent = new Agent({
      name: 'Ops',
      model: new ScriptedModel([batch([['pay', {}, 'p1'], ['wipe', {}, 'w1']]), text('done')]),
      tools: [pay, wipe],
      // Asked only for what the consumer passes without deciding.
      approvalHandler: () => false,
    });
    const handle = Runner.stream(agent, 'go', { tracer: t.tracer, runId: 'ops' });
    await collect(handle, (e) => {
      if (e.type === 'approval_required' && e.call.name === 'pay') e.approve();
    });
    expect(ran).toEqual(['pay']);

    const run = t.one('invoke_agent Ops');
    const approved = t.one('approval pay');
    const denied = t.one('approval wipe');
    expect(approved.attributes).toMatchObject({
      'troupe.approval.id': 'ops:1.0',
      'troupe.run.id': 'ops',
      'troupe.approval.decision': 'approved',
      'troupe.approval.decided_by': 'consumer',
      'gen_ai.tool.name': 'pay',
      'gen_ai.tool.call.id': 'p1',
    });
    expect(denied.attributes).toMatchObject({ 'troupe.approval.id': 'ops:1.1', 'troupe.approval.decision': 'denied', 'troupe.approval.decided_by': 'handler' });
    expect(isError(denied)).toBe(false);
    expect(t.parentOf(approved)).toBe(run);
    expect(t.parentOf(denied)).toBe(run);

    const paySpan = t.one('execute_tool pay');
    const wipeSpan = t.one('execute_tool wipe');
    expect(times(approved).end).toBeLessThanOrEqual(times(paySpan).start);
    expect(paySpan.attributes['troupe.tool.executed']).toBeUndefined();
    expect(isError(paySpan)).toBe(false);
    expect(wipeSpan.attributes['troupe.tool.executed']).toBe(false);
    expect(isError(wipeSpan)).toBe(true);
    expect(wipeSpan.status.message).toMatch(/approval denied for tool 'wipe'/);
    expect(t.childNames(run)).toEqual(['approval pay', 'approval wipe', 'chat scripted', 'chat scripted', 'execute_tool pay', 'execute_tool wipe']);
  });

  it('records the rejection reason and a timeout as who decided', async () => {
    const t = testTrace();
    const a = tool({ name: 'a', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => 'A' });
    const b = tool({ name: 'b', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => 'B' });
    const agent = new Agent({ name: 'R', model: new ScriptedModel([batch([['a', {}, 'a1'], ['b', {}, 'b1']]), text('ok')]), tools: [a, b] });
    const handle = Runner.stream(agent, 'go', { tracer: t.tracer, approvalTimeoutMs: 20 });
    handle.approvals.onOpened((wait) => {
      if (wait.tool === 'a') handle.approvals.reject(wait.approvalId, 'not today');
    });
    const events: string[] = [];
    for await (const e of handle) {
      events.push(e.type);
      // Hold the stream on b's request so only the timeout can decide it.
      if (e.type === 'approval_required' && e.call.name === 'b') await new Promise((r) => setTimeout(r, 60));
    }
    expect(t.one('approval a').attributes).toMatchObject({ 'troupe.approval.decision': 'denied', 'troupe.approval.decided_by': 'consumer', 'troupe.approval.reason': 'not today' });
    expect(t.one('approval b').attributes).toMatchObject({ 'troupe.approval.decision': 'denied', 'troupe.approval.decided_by': 'timeout' });
  });

  it('traces the barrier wait: a parallel:false call waits for the in-flight call, then runs alone', async () => {
    const t = testTrace();
    const release = deferred<string>();
    const fetchTool = tool({ name: 'fetch', description: 'd', parameters: z.object({}), execute: () => release.promise });
    const migrate = tool({ name: 'migrate', description: 'd', parameters: z.object({}), parallel: false, execute: () => 'migrated' });
    const agent = new Agent({ name: 'Db', model: new ScriptedModel([batch([['fetch', {}, 'f1'], ['migrate', {}, 'm1']]), text('done')]), tools: [fetchTool, migrate] });
    const handle = Runner.stream(agent, 'go', { tracer: t.tracer });
    const eventsP = collect(handle);
    await flush();
    // The barrier is open while fetch runs.
    expect(t.named('barrier migrate')).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 15));
    release.resolve('rows');
    await eventsP;

    const run = t.one('invoke_agent Db');
    const barrier = t.one('barrier migrate');
    const fetchSpan = t.one('execute_tool fetch');
    const migrateSpan = t.one('execute_tool migrate');
    expect(t.parentOf(barrier)).toBe(run);
    expect(barrier.attributes).toMatchObject({ 'troupe.barrier.in_flight': 1, 'gen_ai.tool.name': 'migrate', 'gen_ai.tool.call.id': 'm1', 'troupe.turn': 1 });
    expect(times(barrier).start).toBeGreaterThanOrEqual(times(fetchSpan).start);
    expect(times(barrier).end).toBeGreaterThanOrEqual(times(fetchSpan).end);
    expect(times(barrier).end - times(barrier).start).toBeGreaterThanOrEqual(10);
    expect(times(barrier).end).toBeLessThanOrEqual(times(migrateSpan).start);
    expect(t.named('barrier migrate')).toHaveLength(1);
  });

  it('traces a handoff as a span between the two agents\' turns, in one invoke_agent span', async () => {
    const t = testTrace();
    const billing = new Agent({ name: 'Billing', model: new ScriptedModel([text('Invoice resent.')]) });
    const triage = new Agent({ name: 'Triage', model: new ScriptedModel([call('transfer_to_billing', { reason: 'invoice' }, 'h1')]), handoffs: [billing] });
    const result = await Runner.run(triage, 'Resend my invoice', { tracer: t.tracer });
    expect(result.agent).toBe('Billing');

    const run = t.one('invoke_agent Triage');
    const handoff = t.one('handoff Triage → Billing');
    expect(t.parentOf(handoff)).toBe(run);
    expect(handoff.attributes).toMatchObject({ 'troupe.handoff.from': 'Triage', 'troupe.handoff.to': 'Billing', 'troupe.turn': 1 });
    expect(run.attributes['troupe.run.final_agent']).toBe('Billing');
    // A handoff is a barrier (nothing else in flight here).
    expect(t.one('barrier transfer_to_billing').attributes['troupe.barrier.in_flight']).toBe(0);
    const chats = t.named('chat scripted').sort((a, b) => times(a).start - times(b).start);
    expect(chats.map((c) => c.attributes['gen_ai.agent.name'])).toEqual(['Triage', 'Billing']);
    expect(times(t.one('execute_tool transfer_to_billing')).end).toBeLessThanOrEqual(times(handoff).start);
    expect(times(handoff).end).toBeLessThanOrEqual(times(chats[1]!).start);
    expect(t.spans()).toHaveLength(6);
  });

  it('makes each agent-as-tool sub-run a child invoke_agent span of the execute_tool span that started it', async () => {
    const t = testTrace();
    const lookup = tool({ name: 'lookup', description: 'd', parameters: z.object({}), execute: () => 'fact' });
    const research = new Agent({ name: 'Research', model: new ScriptedModel([call('lookup', {}, 'l1'), text('found it')]), tools: [lookup] });
    const lead = new Agent({
      name: 'Lead',
      model: new ScriptedModel([batch([['ask_research', { input: 'x' }, 'a1'], ['ask_research', { input: 'y' }, 'a2']]), text('summary')]),
      tools: [research.asTool()],
    });
    const result = await Runner.run(lead, 'go', { tracer: t.tracer, runId: 'lead' });
    expect(result.output).toBe('summary');

    const root = t.one('invoke_agent Lead');
    expect(t.parentOf(root)).toBeUndefined();
    const subRuns = t.named('invoke_agent Research');
    expect(subRuns).toHaveLength(2);
    const askSpans = t.named('execute_tool ask_research');
    expect(askSpans).toHaveLength(2);
    for (const sub of subRuns) {
      const parent = t.parentOf(sub)!;
      expect(parent.name).toBe('execute_tool ask_research');
      expect(t.parentOf(parent)).toBe(root);
      // Sub-run id `<parent>/<turn>.<index>` names the call that started it.
      const expectedCall = sub.attributes['troupe.run.id'] === 'lead/1.0' ? 'a1' : 'a2';
      expect(parent.attributes['gen_ai.tool.call.id']).toBe(expectedCall);
      expect(sub.attributes).toMatchObject({ 'troupe.run.parent_id': 'lead', 'gen_ai.agent.name': 'Research', 'troupe.run.path': ['Lead', 'Research'] });
      expect(t.childNames(sub)).toEqual(['chat scripted', 'chat scripted', 'execute_tool lookup']);
      expect(times(sub).start).toBeGreaterThanOrEqual(times(parent).start);
      expect(times(sub).end).toBeLessThanOrEqual(times(parent).end);
    }
    expect(new Set(subRuns.map((s) => s.attributes['troupe.run.id']))).toEqual(new Set(['lead/1.0', 'lead/1.1']));
    expect(t.spans()).toHaveLength(1 + 2 + 2 + 2 * 4);
    // One trace for the whole tree.
    expect(new Set(t.spans().map((s) => s.spanContext().traceId)).size).toBe(1);
  });

  it('traces an approval asked inside a sub-run under the sub-run\'s span', async () => {
    const t = testTrace();
    const gated = tool({ name: 'gated', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => 'ok' });
    const inner = new Agent({ name: 'Inner', model: new ScriptedModel([call('gated', {}, 'g1'), text('inner done')]), tools: [gated] });
    const outer = new Agent({ name: 'Outer', model: new ScriptedModel([call('ask_inner', { input: 'go' }, 'o1'), text('outer done')]), tools: [inner.asTool()] });
    const handle = Runner.stream(outer, 'go', { tracer: t.tracer, runId: 'o' });
    await collect(handle, (e) => {
      if (e.type === 'approval_required') e.approve();
    });
    const approval = t.one('approval gated');
    expect(approval.attributes).toMatchObject({ 'troupe.run.id': 'o/1.0', 'troupe.approval.id': 'o/1.0:1.0', 'troupe.approval.decision': 'approved' });
    expect(t.parentOf(approval)).toBe(t.one('invoke_agent Inner'));
  });
});
