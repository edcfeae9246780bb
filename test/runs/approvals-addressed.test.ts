import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, UserError, tool, type RunEvent } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { collect, completed, flush } from '../helpers.js';

/** A refund tool that records which amounts really ran; every refund needs an approval. */
function refunds(ran: number[]) {
  return tool({
    name: 'refund',
    description: 'Refund cents.',
    parameters: z.object({ cents: z.number() }),
    needsApproval: true,
    execute: ({ cents }) => {
      ran.push(cents);
      return `refunded ${cents}`;
    },
  });
}

/** Two parallel sub-runs whose models both name their call 'k1' (providers number calls per reply). */
function twoClerks(ran: number[]) {
  const clerk = (name: string, cents: number) =>
    new Agent({ name, model: new ScriptedModel([call('refund', { cents }, 'k1'), text(`${name} done`)]), tools: [refunds(ran)], approvalHandler: () => 'ask' });
  const lead = new Agent({
    name: 'Lead',
    model: new ScriptedModel([batch([['ask_small', { input: 'refund 100' }, 'a'], ['ask_big', { input: 'refund 999999' }, 'b']]), text('all done')]),
    tools: [clerk('Small', 100).asTool({ name: 'ask_small' }), clerk('Big', 999_999).asTool({ name: 'ask_big' })],
    approvalHandler: () => 'ask',
  });
  return lead;
}

describe('approvals are addressed by run: a call id shared by two sub-runs never crosses over', () => {
  it('approving the 100-cent refund by approvalId runs only it; the other times out on its own timer and is denied', async () => {
    const ran: number[] = [];
    const handle = Runner.stream(twoClerks(ran), 'refunds', { runId: 'root', approvalTimeoutMs: 300 });
    const reading = collect(handle);
    await flush();
    const pending = handle.approvals.pending();
    expect(pending.map((p) => [p.approvalId, p.runId, p.callId, p.path, p.tool, p.args])).toEqual([
      ['root/1.0:1.0', 'root/1.0', 'k1', ['Lead', 'Small'], 'refund', { cents: 100 }],
      ['root/1.1:1.0', 'root/1.1', 'k1', ['Lead', 'Big'], 'refund', { cents: 999_999 }],
    ]);
    // A bare call id that two runs share is ambiguous: a typed error naming both approval ids, nothing decided.
    expect(() => handle.approvals.approve('k1')).toThrow(UserError);
    expect(() => handle.approvals.approve('k1')).toThrow(
      "Call id 'k1' is waiting in 2 places; decide by approvalId: root/1.0:1.0 (run root/1.0, tool refund), root/1.1:1.0 (run root/1.1, tool refund).",
    );
    expect(handle.approvals.pending()).toHaveLength(2);
    expect(handle.approvals.approve(pending.find((p) => p.args && (p.args as { cents: number }).cents === 100)!.approvalId)).toBe(true);
    const events = await reading;
    expect(ran).toEqual([100]);
    const results = completed(events).filter((e) => e.call.id === 'k1').map((e) => [e.runId, e.output]);
    expect(results).toEqual([
      ['root/1.0', 'refunded 100'],
      ['root/1.1', "Tool error: approval denied for tool 'refund'."],
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'run_completed', runId: 'root', output: 'all done' });
  });

  it('decides by { runId, callId } of the waiting run, and by the approval event itself', async () => {
    const ran: number[] = [];
    const handle = Runner.stream(twoClerks(ran), 'refunds', { runId: 'root' });
    const asked: RunEvent[] = [];
    const reading = collect(handle, (e) => {
      if (e.type === 'approval_required') asked.push(e);
    });
    await flush();
    expect(asked.map((e) => e.type === 'approval_required' && [e.approvalId, e.runId, e.call.id])).toEqual([
      ['root/1.0:1.0', 'root/1.0', 'k1'],
      ['root/1.1:1.0', 'root/1.1', 'k1'],
    ]);
    expect(handle.approvals.reject({ runId: 'root/1.1', callId: 'k1' }, 'too much')).toBe(true);
    expect(handle.approvals.approve({ runId: 'root/1.1', callId: 'k1' })).toBe(false);
    const small = asked[0]!;
    if (small.type === 'approval_required') small.approve();
    const events = await reading;
    expect(ran).toEqual([100]);
    expect(completed(events).filter((e) => e.call.id === 'k1').map((e) => e.output).sort()).toEqual([
      "Tool error: approval denied for tool 'refund': too much",
      'refunded 100',
    ]);
  });

  it('sub-run ids stay unique when call ids repeat across turns', async () => {
    const echo = new Agent({ name: 'Echo', model: new ScriptedModel([text('one')]), tools: [] });
    const echo2 = new Agent({ name: 'Echo', model: new ScriptedModel([text('two')]), tools: [] });
    const lead = new Agent({
      name: 'Lead',
      model: new ScriptedModel([call('ask_a', { input: 'x' }, 'same'), call('ask_b', { input: 'y' }, 'same'), text('end')]),
      tools: [echo.asTool({ name: 'ask_a' }), echo2.asTool({ name: 'ask_b' })],
    });
    const events = await collect(Runner.stream(lead, 'q', { runId: 'r' }));
    const subRuns = events.filter((e) => e.type === 'run_started').map((e) => e.runId);
    expect(subRuns).toEqual(['r', 'r/1.0', 'r/2.0']);
  });
});

describe('approval rules fail closed', () => {
  it.each([['yes'], [1], [{}], [[]]])('a predicate answering %j (truthy, not true) asks for an approval', async (answer) => {
    const ran: string[] = [];
    const t = tool({ name: 't', description: 'd', parameters: z.object({}), needsApproval: () => answer as unknown as boolean, execute: () => void ran.push('t') });
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('t', {}, 'c'), text('ok')]), tools: [t] }), 'q'), (e) => {
      if (e.type === 'approval_required') e.reject();
    });
    expect(events.filter((e) => e.type === 'approval_required')).toHaveLength(1);
    expect(ran).toEqual([]);
    expect(completed(events)[0]!.output).toBe("Tool error: approval denied for tool 't'.");
  });

  it.each([['allow', true], [true, true], ['deny', false], [false, false], ['yes', false], [1, false], [{}, false], [undefined, false]])(
    'a handler answering %j allows: %s',
    async (answer, allowed) => {
      const ran: string[] = [];
      const t = tool({ name: 't', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => void ran.push('t') });
      const agent = new Agent({ name: 'a', model: new ScriptedModel([call('t', {}, 'c'), text('ok')]), tools: [t], approvalHandler: () => answer as never });
      await Runner.run(agent, 'q');
      expect(ran).toEqual(allowed ? ['t'] : []);
    },
  );

  it('a throwing predicate emits tool_call_failed with its error, then the denial; the call never starts', async () => {
    const t = tool({ name: 't', description: 'd', parameters: z.object({}), needsApproval: () => { throw new Error('policy db down'); }, execute: () => 'ran' });
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('t', {}, 'c'), text('ok')]), tools: [t], approvalHandler: () => true }), 'q'));
    const forCall = events.filter((e) => 'call' in e).map((e) => (e.type === 'tool_call_failed' ? `${e.type}:${e.error.message}:${e.attempt}:${e.willRetry}` : e.type));
    expect(forCall).toEqual(['tool_call_failed:policy db down:0:false', 'tool_call_completed']);
    expect(completed(events)[0]).toMatchObject({ isError: true, output: "Tool error: approval denied for tool 't'." });
  });

  it('a throwing handler emits tool_call_failed with its error, then the denial', async () => {
    const t = tool({ name: 't', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => 'ran' });
    const agent = new Agent({ name: 'a', model: new ScriptedModel([call('t', {}, 'c'), text('ok')]), tools: [t], approvalHandler: () => { throw new TypeError('handler broke'); } });
    const events = await collect(Runner.stream(agent, 'q'));
    const forCall = events.filter((e) => 'call' in e).map((e) => (e.type === 'tool_call_failed' ? `${e.type}:${e.error.name}:${e.error.message}` : e.type));
    expect(forCall).toEqual(['approval_required', 'tool_call_failed:TypeError:handler broke', 'tool_call_completed']);
  });

  it('each wait owns its timeout: one decided wait never stretches or cancels another', async () => {
    const ran: string[] = [];
    const t = tool({ name: 't', description: 'd', parameters: z.object({ n: z.string() }), needsApproval: true, execute: ({ n }) => void ran.push(n) });
    const model = new ScriptedModel([batch([['t', { n: 'first' }, 'a'], ['t', { n: 'second' }, 'b']]), text('ok')]);
    // 'a' is approved the moment it is asked (no race with its timeout on a loaded machine); 'b'
    // is asked after 'a' ran (both gated calls wait in request order) and times out on its own.
    const handle = Runner.stream(new Agent({ name: 'x', model, tools: [t], approvalHandler: () => 'ask' }), 'q', { approvalTimeoutMs: 200 });
    const pendingWhenAsked: string[][] = [];
    const events = await collect(handle, (event) => {
      if (event.type !== 'approval_required') return;
      pendingWhenAsked.push(handle.approvals.pending().map((p) => p.callId));
      if (event.call.id === 'a') handle.approvals.approve('a');
    });
    expect(pendingWhenAsked).toEqual([['a'], ['b']]);
    expect(ran).toEqual(['first']);
    expect(completed(events).map((e) => `${e.call.id}:${e.output}`)).toEqual(['a:', "b:Tool error: approval denied for tool 't'."]);
  });
});
