/**
 * Checked before anything runs (issue 25, item 6): every misconfiguration that can be known
 * when a run starts fails it at `run_started` (run_started, then run_failed with the
 * UserError) before the first model request and before any tool runs.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, MemorySession, Runner, UserError, tool, type CheckpointStore, type RunEvent } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { collect, trace } from '../helpers.js';

const ran: string[] = [];
const work = tool({ name: 'work', description: 'd', parameters: z.object({}), execute: (_args, ctx) => (ran.push(ctx.callId), 'worked') });

/** Runs `agent` with `options`; expects run_started, run_failed(UserError `message`), no model request and no tool run. */
async function failsAtStart(agent: Agent, model: ScriptedModel, options: Record<string, unknown>, message: string): Promise<void> {
  ran.length = 0;
  const events = await collect(Runner.stream(agent, 'go', options as never));
  expect(trace(events)).toEqual(['run_started', 'run_failed']);
  const failed = events[1] as Extract<RunEvent, { type: 'run_failed' }>;
  expect([failed.error instanceof UserError, failed.error.message]).toEqual([true, message]);
  expect(model.requests).toHaveLength(0);
  expect(ran).toEqual([]);
}

describe('misconfigurations known at start fail the run at run_started', () => {
  it('a session without an id (or without a store): before any tool runs, not when the session is written at the end', async () => {
    const model = new ScriptedModel([call('work', {}, 'c1'), text('done')]);
    const agent = new Agent({ name: 'a', model, tools: [work] });
    await failsAtStart(agent, model, { session: { store: new MemorySession() } }, 'session.id must be a non-empty string, got undefined.');
    await failsAtStart(agent, model, { session: { store: new MemorySession(), id: '' } }, 'session.id must be a non-empty string, got "".');
    await failsAtStart(agent, model, { session: { store: {}, id: 's' } }, 'session.store must be a Session (with history and append), got an object without them.');
  });

  it('a tool name clash in an agent reached only through a handoff, or used as a tool', async () => {
    const clash = tool({ name: 'work', description: 'again', parameters: z.object({}), execute: () => 'x' });
    const back = new Agent({ name: 'back', model: new ScriptedModel([text('back')]), tools: [work, clash] });
    const model = new ScriptedModel([call('transfer_to_back', {}, 'h1')]);
    await failsAtStart(new Agent({ name: 'front', model, handoffs: [back] }), model, {}, "Agent 'back' (reachable from 'front'): Tool name conflict for 'work' from agent tools (also from agent tools).");
    const asTool = new ScriptedModel([call('ask_back', { input: 'x' }, 'a1')]);
    await failsAtStart(new Agent({ name: 'boss', model: asTool, tools: [back.asTool()] }), asTool, {}, "Agent 'back' (reachable from 'boss'): Tool name conflict for 'work' from agent tools (also from agent tools).");
  });

  it('two handoffs with one tool name, and a handoff entry added later that is not an agent', async () => {
    const model = new ScriptedModel([text('never')]);
    const twins = new Agent({ name: 'a', model, handoffs: [new Agent({ name: 'Billing', model }), new Agent({ name: 'billing', model })] });
    await failsAtStart(twins, model, {}, "Tool name conflict for 'transfer_to_billing' from handoffs (also from handoffs).");
    const later = new Agent({ name: 'a', model });
    later.handoffs.push('billing' as never);
    await failsAtStart(later, model, {}, `Agent 'a': handoffs[0] must be an Agent or handoff(agent, options), got "billing".`);
  });

  it('a checkpoint store that is not one, a restart it cannot do, and malformed lease times', async () => {
    const model = new ScriptedModel([text('never')]);
    const agent = new Agent({ name: 'a', model });
    const memory = new MemoryCheckpointStore();
    const noDelete: CheckpointStore = { append: (...a) => memory.append(...a), load: (id) => memory.load(id) };
    await failsAtStart(agent, model, { checkpoint: { store: {} } }, 'checkpoint.store must be a CheckpointStore (with append and load), got an object without them.');
    await failsAtStart(agent, model, { checkpoint: { store: noDelete, ifRunExists: 'restart' } }, 'ifRunExists: "restart" needs a checkpoint store that can delete runs.');
    await failsAtStart(agent, model, { checkpoint: { store: memory, ifRunExists: 'replace' } }, 'checkpoint.ifRunExists must be one of "resume", "restart", "fail", "resume_only", got "replace".');
    await failsAtStart(agent, model, { checkpoint: { store: memory, leaseMs: 0 } }, 'checkpoint.leaseMs must be a positive number, got 0.');
    await failsAtStart(agent, model, { checkpoint: { store: memory, claimWaitMs: -1 } }, 'checkpoint.claimWaitMs must be a non-negative number, got -1.');
    await failsAtStart(agent, model, { runId: '' }, 'runId must be a non-empty string, got "".');
    expect(memory.list()).toEqual([]);
  });
});
