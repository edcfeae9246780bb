/**
 * ScriptedModel and resumed runs: a run resumed by a fresh agent built from the same factory
 * (as after a crash or a restart: a new process builds a new model) continues after the
 * replies already stored instead of asking its first steps again. Found by a newcomer's
 * trial: the refund approval was asked a second time after a restart.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, MemorySession, Runner, tool } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { collect, trace } from '../helpers.js';

function desk(ran: string[]) {
  const refund = tool({
    name: 'refund',
    description: 'Refund an order.',
    parameters: z.object({ orderId: z.string(), cents: z.number() }),
    needsApproval: true,
    execute: ({ orderId, cents }) => (ran.push(orderId), `refunded ${cents} cents on ${orderId}`),
  });
  // A factory, as `troupe serve --agents` and a restarted program use: every call builds a new model.
  return () =>
    new Agent({
      name: 'support',
      model: new ScriptedModel([call('refund', { orderId: 'A123', cents: 6_000 }), text('Refunded $60 on order A123.')]),
      tools: [refund],
      approvalHandler: () => 'ask',
    });
}

describe('ScriptedModel on a resumed run', () => {
  it('a fresh model with the same script continues after the stored reply: the approval is asked once, the tool runs once', async () => {
    const store = new MemoryCheckpointStore();
    const ran: string[] = [];
    const agent = desk(ran);
    const checkpoint = { store, runId: 'r1', suspendOnWait: true };
    const parked = await collect(Runner.stream(agent(), 'Refund order A123', { checkpoint }));
    expect(trace(parked, ['text_delta', 'checkpoint_saved'])).toEqual(['run_started', 'turn_started', 'message_completed', 'approval_required:call_1', 'run_suspended']);

    await Runner.decide(store, 'r1', 'r1:1.0', { approved: true });
    const resumed = await collect(Runner.resume(agent(), checkpoint));
    expect(trace(resumed, ['text_delta', 'checkpoint_saved'])).toEqual([
      'run_started',
      // The stored decision is applied: no approval_required; the stored reply is not asked again.
      'turn_started',
      'tool_call_started:call_1',
      'tool_call_completed:call_1',
      'turn_ended',
      'turn_started',
      'message_completed',
      'turn_ended',
      'run_completed',
    ]);
    expect(ran).toEqual(['A123']);
    expect(resumed.at(-1)).toMatchObject({ type: 'run_completed', output: 'Refunded $60 on order A123.' });
    // The resumed run announces the input it was started with (from the log), not an empty one.
    expect(resumed[0]).toMatchObject({ type: 'run_started', input: 'Refund order A123' });
  });

  it('a script holding only the rest of the run starts at its first step', async () => {
    const store = new MemoryCheckpointStore();
    const ran: string[] = [];
    const checkpoint = { store, runId: 'r2', suspendOnWait: true };
    const first = desk(ran)();
    await collect(Runner.stream(first, 'Refund order A123', { checkpoint }));
    await Runner.decide(store, 'r2', 'r2:1.0', { approved: true });
    const rest = new Agent({ name: 'support', model: new ScriptedModel([text('Done: the rest of the script.')]), tools: first.tools, approvalHandler: () => 'ask' });
    const resumed = await collect(Runner.resume(rest, checkpoint));
    expect(resumed.at(-1)).toMatchObject({ type: 'run_completed', output: 'Done: the rest of the script.' });
    expect(ran).toEqual(['A123']);
  });

  it("a session's next run starts at the first step: the earlier run's replies are history, not this run's", async () => {
    const session = new MemorySession();
    const agent = () => new Agent({ name: 'a', model: new ScriptedModel([text('Hello.'), text('Never asked.')]) });
    await Runner.run(agent(), 'hi', { runId: 's-1', session: { store: session, id: 's' } });
    const second = await Runner.run(agent(), 'hi again', { runId: 's-2', session: { store: session, id: 's' } });
    expect(second.output).toBe('Hello.');
  });
});
