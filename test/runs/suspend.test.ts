/**
 * Suspended approvals (issue "Durable runs you can trust", item 5): a durable run parks when
 * only approvals wait, the decision is recorded from "another process" (a fresh store view,
 * Runner.decide), and Runner.resume runs only the approved call.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, RunLocked, RunSuspended, Runner, UserError, tool } from '../../src/index.js';
import { ScriptedModel, batch, text } from '../../src/entry/testing.js';
import { hashArguments } from '../../src/runtime/args-hash.js';
import { collect, flush, trace } from '../helpers.js';

function world() {
  const ran: string[] = [];
  const quick = tool({ name: 'quick', description: 'd', parameters: z.object({}), execute: (_a, ctx) => (ran.push(ctx.callId), 'quick done') });
  const refund = tool({
    name: 'refund',
    description: 'd',
    parameters: z.object({ cents: z.number() }),
    needsApproval: true,
    execute: ({ cents }, ctx) => (ran.push(ctx.callId), `refunded ${cents}`),
  });
  const agent = (model: ScriptedModel) => new Agent({ name: 'desk', model, tools: [quick, refund], approvalHandler: () => 'ask' });
  return { ran, agent };
}

const kinds = (store: MemoryCheckpointStore, runId: string) => store.load(runId)!.entries.map((e) => e.kind);

describe('suspend for approvals', () => {
  it('suspendOnWait parks once the quick call is done; decide + resume run only the approved call', async () => {
    const store = new MemoryCheckpointStore();
    const { ran, agent } = world();
    const first = Runner.stream(agent(new ScriptedModel([batch([['quick', {}, 'q1'], ['refund', { cents: 100 }, 'r1']])])), 'refund me', {
      checkpoint: { store, runId: 'desk-1', suspendOnWait: true },
    });
    const events = await collect(first);
    expect(trace(events, ['text_delta', 'checkpoint_saved'])).toEqual([
      'run_started',
      'turn_started',
      'message_completed',
      'tool_call_started:q1',
      // Preflight is serial but q1 runs beside it: the run parks only once q1 is done.
      'approval_required:r1',
      'tool_call_completed:q1',
      'run_suspended',
    ]);
    const suspended = events.at(-1) as Extract<(typeof events)[number], { type: 'run_suspended' }>;
    expect(suspended.approvals).toEqual([{ approvalId: 'desk-1:1.1', callId: 'r1', tool: 'refund', arguments: '{"cents":100}', requestedAt: expect.any(Number) }]);
    const error = await first.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunSuspended);
    expect((error as RunSuspended).message).toBe(
      "Run 'desk-1' is suspended, waiting for approval 'desk-1:1.1' (refund); decide with Runner.decide and continue with Runner.resume.",
    );
    expect(store.load('desk-1')!.head.status).toBe('suspended');
    expect(store.load('desk-1')!.lease).toBeUndefined();
    expect(kinds(store, 'desk-1')).toEqual(['input', 'reply', 'approval_request', 'result']);

    const decision = await Runner.decide(store, 'desk-1', 'desk-1:1.1', { approved: true, by: 'alice' });
    expect(decision).toMatchObject({ kind: 'approval_decision', approvalId: 'desk-1:1.1', callId: 'r1', approved: true, by: 'alice' });
    await expect(Runner.decide(store, 'desk-1', 'desk-1:1.1', { approved: false })).rejects.toThrow(
      "Run 'desk-1' has no pending approval 'desk-1:1.1' (it is unknown, already decided, or its call finished).",
    );

    const resumed = Runner.resume(agent(new ScriptedModel([text('refund sent')])), { store, runId: 'desk-1' });
    const after = await collect(resumed);
    expect(trace(after, ['text_delta', 'checkpoint_saved'])).toEqual([
      'run_started',
      'turn_started',
      'tool_call_started:r1',
      'tool_call_completed:r1',
      'turn_ended',
      'turn_started',
      'message_completed',
      'turn_ended',
      'run_completed',
    ]);
    expect((await resumed.result()).output).toBe('refund sent');
    expect(ran).toEqual(['q1', 'r1']);
    expect(store.load('desk-1')!.head).toMatchObject({ status: 'completed', output: 'refund sent', turn: 2 });
  });

  it('a denial recorded by Runner.decide reaches the model with its reason; the tool never runs', async () => {
    const store = new MemoryCheckpointStore();
    const { ran, agent } = world();
    await collect(Runner.stream(agent(new ScriptedModel([batch([['refund', { cents: 5 }, 'r1']])])), 'go', { checkpoint: { store, runId: 'd2', suspendOnWait: true } }));
    await Runner.decide(store, 'd2', 'd2:1.0', { approved: false, reason: 'not this month', by: 'bob' });
    const resumed = Runner.resume(agent(new ScriptedModel([text('ok, no refund')])), { store, runId: 'd2' });
    const events = await collect(resumed);
    const result = events.find((e) => e.type === 'tool_call_completed')!;
    expect(result).toMatchObject({ output: "Tool error: approval denied for tool 'refund': not this month", isError: true });
    expect(ran).toEqual([]);
  });

  it('handle.suspend() parks a run waiting for a person; a decision for other arguments is not applied (fail closed)', async () => {
    const store = new MemoryCheckpointStore();
    const { ran, agent } = world();
    const handle = Runner.stream(agent(new ScriptedModel([batch([['refund', { cents: 7 }, 'r1']])])), 'go', { checkpoint: { store, runId: 'd3' } });
    const events = await collect(handle, (event) => {
      if (event.type === 'approval_required') handle.suspend();
    });
    expect(events.at(-1)!.type).toBe('run_suspended');
    // A decision whose argument hash does not match the stored request is ignored: the call is asked again.
    const entries = store.load('d3')!.entries;
    const request = entries.find((e) => e.kind === 'approval_request')!;
    store.claim('d3', 'tamper', 1000);
    store.append('d3', [{ kind: 'approval_decision', approvalId: 'd3:1.0', callId: 'r1', argsHash: '0'.repeat(64), approved: true, decidedAt: 1 }], store.load('d3')!.head, { owner: 'tamper', seq: entries.length });
    store.release('d3', 'tamper');
    expect(request.kind).toBe('approval_request');
    const resumed = Runner.resume(agent(new ScriptedModel([text('never')])), { store, runId: 'd3', suspendOnWait: true });
    const after = await collect(resumed);
    expect(trace(after, ['text_delta', 'checkpoint_saved'])).toEqual(['run_started', 'turn_started', 'approval_required:r1', 'run_suspended']);
    expect(ran).toEqual([]);
  });

  it('Runner.decide with edited args: checked before anything is written; validated against the tool when the agent is given; the resumed run runs exactly them', async () => {
    const store = new MemoryCheckpointStore();
    const { ran, agent } = world();
    const parked = Runner.stream(agent(new ScriptedModel([batch([['refund', { cents: 100 }, 'r1']])])), 'go', { checkpoint: { store, runId: 'edit-1', suspendOnWait: true } });
    await parked.result().catch(() => undefined);
    const stored = store.load('edit-1')!.entries.length;
    const refusals: Array<[Parameters<typeof Runner.decide>[3], Parameters<typeof Runner.decide>[4], string, string]> = [
      [{ approved: false, args: { cents: 1 } }, undefined, 'UserError', 'Edited args are only allowed with approved: true.'],
      [{ approved: true, args: [1] as unknown as Record<string, unknown> }, undefined, 'UserError', 'Edited args must be a JSON object, got [1].'],
      [{ approved: true, args: { cents: 10n } as unknown as Record<string, unknown> }, undefined, 'UserError', 'Edited arguments cannot be written as JSON: Do not know how to serialize a BigInt.'],
      [{ approved: true, args: { cents: 'ten' } }, { agent: agent(new ScriptedModel([])) }, 'InvalidToolArguments', "Invalid arguments for tool 'refund': cents: Invalid input: expected number, received string"],
    ];
    for (const [decision, options, name, message] of refusals) {
      const refused = await Runner.decide(store, 'edit-1', 'edit-1:1.0', decision, options).catch((e: unknown) => e);
      expect([(refused as Error).name, (refused as Error).message]).toEqual([name, message]);
    }
    expect(store.load('edit-1')!.entries).toHaveLength(stored);

    const decided = await Runner.decide(store, 'edit-1', 'edit-1:1.0', { approved: true, args: { cents: 7 }, by: 'alice' }, { agent: agent(new ScriptedModel([])) });
    expect(decided).toMatchObject({ approved: true, editedArguments: '{"cents":7}', editedArgsHash: hashArguments('{"cents":7}'), argsHash: hashArguments('{"cents":100}') });
    const model = new ScriptedModel([text('refunded')]);
    await Runner.resume(agent(model), { store, runId: 'edit-1' }).result();
    expect(ran).toEqual(['r1']);
    expect(model.requests[0]!.messages.at(-1)).toMatchObject({ role: 'tool', callId: 'r1', content: 'refunded 7', isError: false });
  });

  it('edits a store cannot write as JSON throw a UserError at approve() and the call keeps waiting', async () => {
    const { ran, agent } = world();
    const handle = Runner.stream(agent(new ScriptedModel([batch([['refund', { cents: 100 }, 'r1']]), text('ok')])), 'go');
    const cyclic: Record<string, unknown> = { cents: 1 };
    cyclic.self = cyclic;
    for await (const event of handle) {
      if (event.type !== 'approval_required') continue;
      expect(() => event.approve({ args: cyclic })).toThrow(UserError);
      expect(() => handle.approvals.approve(event.approvalId, { args: cyclic })).toThrow(/^Edited arguments cannot be written as JSON: Converting circular structure to JSON/);
      expect(handle.approvals.pending().map((p) => p.callId)).toEqual(['r1']);
      handle.approvals.approve(event.approvalId, { args: { cents: 2 } });
    }
    expect((await handle.result()).output).toBe('ok');
    expect(ran).toEqual(['r1']);
  });

  it('suspend() needs a durable run; Runner.decide refuses a run another owner holds and an unknown run', async () => {
    const { agent } = world();
    const plain = Runner.stream(agent(new ScriptedModel([text('x')])), 'go');
    expect(() => plain.suspend()).toThrow(UserError);
    expect(() => plain.suspend()).toThrow(/has no checkpoint store; only durable runs can be suspended/);
    await plain.result();

    const store = new MemoryCheckpointStore();
    await expect(Runner.decide(store, 'nope', 'nope:1.0', { approved: true })).rejects.toThrow("Run 'nope' is not in the checkpoint store.");
    const held = Runner.stream(agent(new ScriptedModel([batch([['refund', { cents: 1 }, 'r1']])])), 'go', { checkpoint: { store, runId: 'live', owner: 'worker-a' } });
    const reading = collect(held);
    await flush();
    const refused = await Runner.decide(store, 'live', 'live:1.0', { approved: true }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RunLocked);
    expect((refused as RunLocked).message).toMatch(/^Run 'live' is locked by 'worker-a' until \d{4}-\d\d-\d\dT[\d:.]+Z; nothing was written\./);
    held.approvals.approve('live:1.0');
    await reading;
  });

  it('approvalTimeoutMs counts from the stored request time: a parked approval older than it is denied on resume at once', async () => {
    const store = new MemoryCheckpointStore();
    const { ran, agent } = world();
    const args = '{"cents":3}';
    const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 1 };
    // Parked two minutes ago (written as the run writes it).
    store.append(
      'old',
      [
        { kind: 'input', message: { role: 'user', content: 'go' } },
        { kind: 'reply', turn: 1, message: { role: 'assistant', content: '', toolCalls: [{ id: 'r1', name: 'refund', arguments: args }], agent: 'desk' } },
        { kind: 'approval_request', turn: 1, index: 0, callId: 'r1', approvalId: 'old:1.0', tool: 'refund', argsHash: hashArguments(args), requestedAt: Date.now() - 120_000 },
      ],
      { agent: 'desk', turn: 1, usage, status: 'suspended' },
    );
    const resumed = Runner.resume(agent(new ScriptedModel([text('timed out, sorry')])), { store, runId: 'old' }, { approvalTimeoutMs: 60_000 });
    const events = await collect(resumed);
    expect(events.find((e) => e.type === 'approval_required')).toMatchObject({ approvalId: 'old:1.0' });
    expect(events.find((e) => e.type === 'tool_call_completed')).toMatchObject({ output: "Tool error: approval denied for tool 'refund'.", isError: true });
    expect(store.load('old')!.entries.filter((e) => e.kind === 'approval_decision')).toEqual([
      expect.objectContaining({ approvalId: 'old:1.0', approved: false, by: 'timeout' }),
    ]);
    expect((await resumed.result()).output).toBe('timed out, sorry');
    expect(ran).toEqual([]);
  });
});
