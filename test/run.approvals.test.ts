import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, tool, type ApprovalHandler, type RunEvent } from '../src/index.js';
import { ScriptedModel, batch, call, text } from '../src/entry/testing.js';
import { collect, completed, deferred, flush, trace } from './helpers.js';

function refundTool(ran: string[]) {
  return tool({
    name: 'refund',
    description: 'Refund an order.',
    parameters: z.object({ orderId: z.string(), cents: z.number() }),
    needsApproval: (args) => args.cents > 5000,
    execute: ({ orderId }, ctx) => {
      ran.push(ctx.callId);
      return `refunded ${orderId}`;
    },
  });
}

const refundScript = () =>
  new ScriptedModel([
    batch([
      ['refund', { orderId: 'A1', cents: 100 }, 'small'],
      ['refund', { orderId: 'A2', cents: 9000 }, 'big'],
    ]),
    text('done'),
  ]);

describe('approvals', () => {
  it('asks only when the predicate says so, and runs the call after ev.approve()', async () => {
    const ran: string[] = [];
    const handle = Runner.stream(new Agent({ name: 'support', model: refundScript(), tools: [refundTool(ran)] }), 'refund');
    const events = await collect(handle, (e) => {
      if (e.type === 'approval_required') {
        expect(e.args).toEqual({ orderId: 'A2', cents: 9000 });
        e.approve();
      }
    });
    const calls = trace(events).filter((t) => t.includes(':'));
    // The approval is asked while the earlier call is still in flight; the approved call runs after it.
    // (Whether small's result or big's start comes first is up to the two calls' own timing.)
    expect(calls.slice(0, 2)).toEqual(['tool_call_started:small', 'approval_required:big']);
    expect([...calls.slice(2)].sort()).toEqual(['tool_call_completed:big', 'tool_call_completed:small', 'tool_call_started:big']);
    expect(calls.indexOf('tool_call_started:big')).toBeLessThan(calls.indexOf('tool_call_completed:big'));
    expect(ran).toEqual(['small', 'big']);
  });

  it('denies after ev.reject() with an error result and no tool_call_started', async () => {
    const ran: string[] = [];
    const handle = Runner.stream(new Agent({ name: 'support', model: refundScript(), tools: [refundTool(ran)] }), 'refund');
    const events = await collect(handle, (e) => {
      if (e.type === 'approval_required') e.reject();
    });
    expect(ran).toEqual(['small']);
    expect(trace(events).filter((t) => t.includes(':big'))).toEqual(['approval_required:big', 'tool_call_completed:big']);
    expect(completed(events).find((e) => e.call.id === 'big')).toMatchObject({ isError: true, output: "Tool error: approval denied for tool 'refund'." });
  });

  it('fails closed when the consumer pulls past an undecided approval and there is no handler', async () => {
    const ran: string[] = [];
    const events = await collect(Runner.stream(new Agent({ name: 'support', model: refundScript(), tools: [refundTool(ran)] }), 'refund'));
    expect(ran).toEqual(['small']);
    expect(completed(events).find((e) => e.call.id === 'big')!.isError).toBe(true);
  });

  it('Runner.run without a handler denies gated calls', async () => {
    const ran: string[] = [];
    const model = refundScript();
    const result = await Runner.run(new Agent({ name: 'support', model, tools: [refundTool(ran)] }), 'refund');
    expect(ran).toEqual(['small']);
    expect(result.transcript.find((m) => m.role === 'tool' && m.callId === 'big')).toEqual({
      role: 'tool',
      callId: 'big',
      name: 'refund',
      content: "Tool error: approval denied for tool 'refund'.",
      isError: true,
    });
  });

  it.each([
    [true, ['small', 'big']],
    ['allow', ['small', 'big']],
    [false, ['small']],
    ['deny', ['small']],
    ['ask', ['small']],
  ] as const)('approvalHandler answering %s under Runner.run runs %j', async (answer, expected) => {
    const ran: string[] = [];
    const seen: string[] = [];
    const handler: ApprovalHandler = (request, ctx) => {
      seen.push(`${request.call.id} ${request.agent} ${ctx.callId}`);
      return answer;
    };
    await Runner.run(new Agent({ name: 'support', model: refundScript(), tools: [refundTool(ran)], approvalHandler: handler }), 'refund');
    expect(ran).toEqual(expected);
    expect(seen).toEqual(['big support big']);
  });

  it('denies when the handler throws or the predicate throws', async () => {
    const ran: string[] = [];
    await Runner.run(new Agent({ name: 's', model: refundScript(), tools: [refundTool(ran)], approvalHandler: () => { throw new Error('db down'); } }), 'refund');
    expect(ran).toEqual(['small']);

    const ran2: string[] = [];
    const t = tool({ name: 'x', description: 'd', parameters: z.object({}), needsApproval: () => { throw new Error('bad predicate'); }, execute: () => { ran2.push('x'); return 1; } });
    const r = await Runner.run(new Agent({ name: 's', model: new ScriptedModel([call('x', {}, 'x1'), text('ok')]), tools: [t], approvalHandler: () => true }), 'q');
    expect(ran2).toEqual([]);
    expect(r.transcript[2]).toMatchObject({ isError: true, content: "Tool error: approval denied for tool 'x'." });
  });

  it('the consumer decision wins over the handler', async () => {
    const ran: string[] = [];
    const handle = Runner.stream(new Agent({ name: 's', model: refundScript(), tools: [refundTool(ran)], approvalHandler: () => 'deny' }), 'refund');
    await collect(handle, (e) => {
      if (e.type === 'approval_required') e.approve();
    });
    expect(ran).toEqual(['small', 'big']);
  });

  it('"ask" leaves the call waiting for handle.approvals while the consumer keeps reading', async () => {
    const ran: string[] = [];
    const handle = Runner.stream(new Agent({ name: 's', model: refundScript(), tools: [refundTool(ran)], approvalHandler: () => 'ask' }), 'refund');
    const seen: RunEvent[] = [];
    const reading = collect(handle, (e) => void seen.push(e));
    await flush();
    expect(handle.approvals.pending().map((p) => p.callId)).toEqual(['big']);
    expect(ran).toEqual(['small']);
    expect(handle.approvals.approve('nope')).toBe(false);
    expect(handle.approvals.approve('big')).toBe(true);
    await reading;
    expect(ran).toEqual(['small', 'big']);
    expect(handle.approvals.pending()).toEqual([]);
  });

  it('release(false) denies every waiting call', async () => {
    const ran: string[] = [];
    const handle = Runner.stream(new Agent({ name: 's', model: refundScript(), tools: [refundTool(ran)], approvalHandler: () => 'ask' }), 'refund');
    const reading = collect(handle);
    await flush();
    expect(handle.approvals.release(false)).toBe(1);
    await reading;
    expect(ran).toEqual(['small']);
  });

  it('approvalTimeoutMs auto-denies an undecided call', async () => {
    const ran: string[] = [];
    const handle = Runner.stream(new Agent({ name: 's', model: refundScript(), tools: [refundTool(ran)], approvalHandler: () => 'ask' }), 'refund', { approvalTimeoutMs: 10 });
    const events = await collect(handle);
    expect(ran).toEqual(['small']);
    expect(completed(events).find((e) => e.call.id === 'big')!.output).toBe("Tool error: approval denied for tool 'refund'.");
  });

  it('cancelling during an approval wait denies it and ends with run_failed(RunCancelled)', async () => {
    const ran: string[] = [];
    const handle = Runner.stream(new Agent({ name: 's', model: refundScript(), tools: [refundTool(ran)], approvalHandler: () => 'ask' }), 'refund');
    const reading = collect(handle);
    await flush();
    handle.cancel('user left');
    const events = await reading;
    expect(ran).toEqual(['small']);
    expect(trace(events).slice(-2)).toEqual(['tool_call_completed:big', 'run_failed']);
    expect(completed(events).find((e) => e.call.id === 'big')!.output).toBe('Tool error: run cancelled: user left');
    await expect(handle.result()).rejects.toThrow('Run cancelled: user left');
  });

  it('approval of a later call does not wait for in-flight earlier calls', async () => {
    const gate = deferred<string>();
    const slow = tool({ name: 'slow', description: 'd', parameters: z.object({}), execute: () => gate.promise });
    const gated = tool({ name: 'gated', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => 'g' });
    const model = new ScriptedModel([batch([['slow', {}, 's'], ['gated', {}, 'g']]), text('ok')]);
    const handle = Runner.stream(new Agent({ name: 'a', model, tools: [slow, gated] }), 'q');
    const order: string[] = [];
    const reading = collect(handle, (e) => {
      if (e.type === 'approval_required') {
        order.push('asked');
        e.approve();
      }
      if (e.type === 'tool_call_completed') order.push(`done ${e.call.id}`);
    });
    await flush();
    // The gated call was asked, approved and finished while 'slow' is still running.
    expect(order).toEqual(['asked', 'done g']);
    gate.resolve('s');
    await reading;
    expect(order).toEqual(['asked', 'done g', 'done s']);
  });
});

describe('"ask" approvals when the consumer leaves', () => {
  const setup = () => {
    const ran: string[] = [];
    const t = tool({ name: 'g', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => { ran.push('G'); return 'ran'; } });
    const model = new ScriptedModel([call('g', {}, 'G'), text('done')]);
    return { ran, handle: Runner.stream(new Agent({ name: 'a', model, tools: [t], approvalHandler: () => 'ask' }), 'q') };
  };

  it('breaking out at approval_required denies the waiting call', async () => {
    const { ran, handle } = setup();
    for await (const event of handle) if (event.type === 'approval_required') break;
    const result = await handle.result();
    expect(ran).toEqual([]);
    expect(result.transcript[2]).toMatchObject({ callId: 'G', isError: true });
    expect(handle.approvals.pending()).toEqual([]);
  });

  /** Reads up to the approval, then pulls past it: the handler's "ask" keeps the call waiting, so no event comes. */
  async function parkPastApproval() {
    const { ran, handle } = setup();
    const iterator = handle[Symbol.asyncIterator]();
    for (;;) {
      const { value } = await iterator.next();
      if (value?.type === 'approval_required') break;
    }
    const parked = iterator.next();
    await flush();
    expect(handle.approvals.pending().map((p) => p.callId)).toEqual(['G']);
    return { ran, handle, iterator, parked };
  }

  it('pulling past it and then returning the iterator denies it', async () => {
    const { ran, handle, iterator, parked } = await parkPastApproval();
    await iterator.return!();
    expect(await parked).toEqual({ value: undefined, done: true });
    await handle.result();
    expect(ran).toEqual([]);
  });

  it('pulling past it and then stopListening() denies it', async () => {
    const { ran, handle, parked } = await parkPastApproval();
    handle.stopListening();
    expect(await parked).toEqual({ value: undefined, done: true });
    await handle.result();
    expect(ran).toEqual([]);
  });
});

describe('handle.approvals.settled', () => {
  it('resolves with the decision, whoever makes it, and undefined for a call that is not waiting', async () => {
    const ran: string[] = [];
    const handle = Runner.stream(new Agent({ name: 's', model: refundScript(), tools: [refundTool(ran)], approvalHandler: () => 'ask' }), 'refund');
    const reading = collect(handle);
    await flush();
    expect(await handle.approvals.settled('nope')).toBeUndefined();
    const decision = handle.approvals.settled('big');
    handle.approvals.approve('big');
    expect(await decision).toBe(true);
    await reading;
    expect(ran).toEqual(['small', 'big']);

    const second = Runner.stream(new Agent({ name: 's', model: refundScript(), tools: [refundTool([])], approvalHandler: () => 'ask' }), 'refund');
    const reading2 = collect(second);
    await flush();
    const cancelled = second.approvals.settled('big');
    second.cancel('bye');
    expect(await cancelled).toBe(false);
    await reading2;
  });
});
