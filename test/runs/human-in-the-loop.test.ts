import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, UserError, askHuman, tool, type RunEvent } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { collect, completed, flush } from '../helpers.js';

function refund(ran: unknown[]) {
  return tool({ name: 'refund', description: 'd', parameters: z.object({ cents: z.number().max(10_000) }), needsApproval: true, execute: (args) => void ran.push(args) });
}

describe('approve with edited arguments', () => {
  it('runs the call with the edited arguments, validated again', async () => {
    const ran: unknown[] = [];
    const agent = new Agent({ name: 'a', model: new ScriptedModel([call('refund', { cents: 9000 }, 'r'), text('ok')]), tools: [refund(ran)] });
    const events = await collect(Runner.stream(agent, 'q'), (e) => {
      if (e.type === 'approval_required') e.approve({ args: { cents: 5000 } });
    });
    expect(ran).toEqual([{ cents: 5000 }]);
    expect(completed(events)[0]).toMatchObject({ isError: false });
  });

  it('invalid edits give the call an error result and it never runs', async () => {
    const ran: unknown[] = [];
    const agent = new Agent({ name: 'a', model: new ScriptedModel([call('refund', { cents: 9000 }, 'r'), text('ok')]), tools: [refund(ran)], approvalHandler: () => 'ask' });
    const handle = Runner.stream(agent, 'q');
    const reading = collect(handle);
    await flush();
    expect(handle.approvals.approve('r', { args: { cents: 99_999 } })).toBe(true);
    const events = await reading;
    expect(ran).toEqual([]);
    expect(events.filter((e) => e.type === 'tool_call_started')).toHaveLength(0);
    expect(completed(events)[0]!.output).toBe("Tool error: edited arguments for tool 'refund' are invalid: Invalid arguments for tool 'refund': cents: Too big: expected number to be <=10000");
  });
});

describe('askHuman through the run', () => {
  const asking = (args: unknown) => new Agent({ name: 'a', model: new ScriptedModel([call('ask_human', args, 'h'), text('thanks')]), tools: [askHuman()] });

  it('emits human_request, takes the answer from handle.humans, emits human_answer; the answer is the result', async () => {
    const handle = Runner.stream(asking({ question: 'Which city?' }), 'plan', { runId: 'r' });
    const reading = collect(handle);
    await flush();
    expect(handle.humans.pending().map((q) => [q.requestId, q.runId, q.callId, q.question, q.multiSelect])).toEqual([['r:1.0', 'r', 'h', 'Which city?', false]]);
    expect(handle.humans.answer('nope', 'x')).toBe(false);
    expect(handle.humans.answer('r:1.0', 'Rome')).toBe(true);
    const events = await reading;
    const human = events.filter((e) => e.type === 'human_request' || e.type === 'human_answer');
    expect(human.map((e) => (e.type === 'human_request' ? [e.type, e.requestId, e.question] : e.type === 'human_answer' ? [e.type, e.requestId, e.answer] : []))).toEqual([
      ['human_request', 'r:1.0', 'Which city?'],
      ['human_answer', 'r:1.0', 'Rome'],
    ]);
    expect(completed(events)[0]!.output).toBe('Rome');
    expect(handle.humans.pending()).toEqual([]);
  });

  it('structured: options and multi-select; an answer that does not fit is a UserError and answers nothing', async () => {
    const handle = Runner.stream(asking({ question: 'Which days?', options: ['Sat', 'Sun', 'Mon'], multiSelect: true }), 'plan', { runId: 'r' });
    const reading = collect(handle);
    await flush();
    const [question] = handle.humans.pending();
    expect([question!.options, question!.multiSelect]).toEqual([['Sat', 'Sun', 'Mon'], true]);
    expect(() => handle.humans.answer('r:1.0', 'Sat')).toThrow(UserError);
    expect(() => handle.humans.answer('r:1.0', ['Sat', 'Fri'])).toThrow("'Fri' is not an option of 'Which days?'; options: Sat, Sun, Mon.");
    expect(handle.humans.pending()).toHaveLength(1);
    expect(handle.humans.answer('r:1.0', ['Sun', 'Sat'])).toBe(true);
    const events = await reading;
    expect(completed(events)[0]!.output).toBe('["Sun","Sat"]');
    expect((events.find((e) => e.type === 'human_answer') as Extract<RunEvent, { type: 'human_answer' }>).answer).toEqual(['Sun', 'Sat']);
  });

  it('a cancel while a person thinks ends the wait with the run', async () => {
    const handle = Runner.stream(asking({ question: 'Still there?' }), 'plan');
    const reading = collect(handle);
    await flush();
    handle.cancel('user left');
    const events = await reading;
    expect(handle.humans.pending()).toEqual([]);
    expect(completed(events)[0]!.output).toBe('Tool error: run cancelled: user left');
    expect(events.at(-1)!.type).toBe('run_failed');
  });

  it('a channel gets the options too; its answer is checked', async () => {
    const seen: unknown[] = [];
    const tool2 = askHuman((question, _ctx, choices) => {
      seen.push([question, choices]);
      return 'Maybe';
    });
    const agent = new Agent({ name: 'a', model: new ScriptedModel([call('ask_human', { question: 'Go?', options: ['Yes', 'No'] }, 'h'), text('ok')]), tools: [tool2] });
    const result = await Runner.run(agent, 'q');
    expect(seen).toEqual([['Go?', { options: ['Yes', 'No'], multiSelect: false }]]);
    expect(result.transcript[2]).toMatchObject({ isError: true, content: "Tool error: the human channel's answer does not fit: 'Maybe' is not an option of 'Go?'; options: Yes, No." });
  });
});
