import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, BudgetExceeded, RunCancelled, Runner, tool, type RunEvent } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { collect, completed, deferred, flush } from '../helpers.js';

describe('runs talk by messages', () => {
  it('RunCancelled raised by a tool inside a sub-run cancels the whole tree', async () => {
    const quit = tool({ name: 'quit', description: 'd', parameters: z.object({}), execute: () => { throw new RunCancelled('user said stop'); } });
    const gate = deferred<string>();
    let siblingAborted = false;
    const slow = tool({
      name: 'slow', description: 'd', parameters: z.object({}),
      execute: (_a, ctx) => { ctx.signal.addEventListener('abort', () => (siblingAborted = true)); return gate.promise; },
    });
    const child = new Agent({ name: 'Child', model: new ScriptedModel([call('quit', {}, 'q'), text('never')]), tools: [quit] });
    const root = new Agent({ name: 'Root', model: new ScriptedModel([batch([['ask_child', { input: 'go' }, 'a'], ['slow', {}, 's']]), text('never')]), tools: [child.asTool(), slow] });
    const handle = Runner.stream(root, 'q', { runId: 'r' });
    const events = await collect(handle);
    const terminal = events.filter((e) => e.type === 'run_failed' || e.type === 'run_completed').map((e) => [e.type, e.runId, e.type === 'run_failed' ? e.error.message : '']);
    expect(terminal).toEqual([
      ['run_failed', 'r/1.0', 'Run cancelled: user said stop'],
      ['run_failed', 'r', 'Run cancelled: user said stop'],
    ]);
    expect(siblingAborted).toBe(true);
    expect(completed(events).filter((e) => e.runId === 'r').map((e) => [e.call.id, e.output])).toEqual([
      // The agent tool's own result carries the child's RunCancelled; the sibling is closed by the cancel.
      ['a', 'Tool error: Run cancelled: user said stop'],
      ['s', 'Tool error: run cancelled: user said stop'],
    ]);
    await expect(handle.result()).rejects.toBeInstanceOf(RunCancelled);
  });

  it("a grandchild is bound by the root's remaining budget, not only by its parent's", async () => {
    const ran: string[] = [];
    const work = tool({ name: 'work', description: 'd', parameters: z.object({ n: z.string() }), execute: ({ n }) => void ran.push(n) });
    // Leaf calls work three times in one batch; the root allows 3 tool calls in total: ask_mid, ask_leaf, and one work.
    const leaf = new Agent({ name: 'Leaf', model: new ScriptedModel([batch([['work', { n: '1' }, 'w'], ['work', { n: '2' }, 'w'], ['work', { n: '3' }, 'w']]), text('leaf done')]), tools: [work] });
    const mid = new Agent({ name: 'Mid', model: new ScriptedModel([call('ask_leaf', { input: 'go' }, 'l'), text('mid done')]), tools: [leaf.asTool()] });
    const root = new Agent({ name: 'Root', model: new ScriptedModel([call('ask_mid', { input: 'go' }, 'm'), text('root done')]), tools: [mid.asTool()] });
    const events = await collect(Runner.stream(root, 'q', { runId: 'r', budget: { maxToolCalls: 3 } }));
    expect(ran).toEqual(['1']);
    const leafResults = completed(events).filter((e) => e.runId === 'r/1.0/1.0').map((e) => e.output);
    // Completion order: the two refused calls at once, then the one that ran.
    expect(leafResults).toEqual(['Tool error: tool call count 4 exceeds budget 3', 'Tool error: not executed: tool call count 4 exceeds budget 3', '']);
    const last = events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>;
    expect(last.runId).toBe('r');
    expect(last.error).toBeInstanceOf(BudgetExceeded);
    expect(last.error.message).toBe('tool call count 4 exceeds budget 3');
  });

  it('a sibling sub-run learns what another spent (ancestor.spend) and stops at its next check', async () => {
    const gate = deferred<string>();
    const wait = tool({ name: 'wait', description: 'd', parameters: z.object({}), execute: () => gate.promise });
    const spender = new Agent({ name: 'Spender', model: new ScriptedModel([text('spent', { usage: { inputTokens: 90, outputTokens: 0 } })]), tools: [] });
    const waiter = new Agent({ name: 'Waiter', model: new ScriptedModel([call('wait', {}, 'w'), text('waited', { usage: { inputTokens: 1, outputTokens: 0 } })]), tools: [wait] });
    const root = new Agent({
      name: 'Root',
      model: new ScriptedModel([batch([['ask_waiter', { input: 'go' }, 'a'], ['ask_spender', { input: 'go' }, 'b']], { usage: { inputTokens: 5, outputTokens: 0 } }), text('never')]),
      tools: [waiter.asTool(), spender.asTool()],
    });
    const handle = Runner.stream(root, 'q', { runId: 'r', budget: { maxInputTokens: 50 } });
    const reading = collect(handle);
    await flush();
    gate.resolve('ok');
    const events = await reading;
    // The waiter's copy of the root's spend was 5 at spawn; the message made it 95, and its own reply adds 1.
    const waiterEnd = events.find((e) => e.runId === 'r/1.0' && e.type === 'run_failed') as Extract<RunEvent, { type: 'run_failed' }>;
    expect(waiterEnd.error.message).toBe('input tokens 96 exceeds budget 50');
    expect(events.at(-1)).toMatchObject({ type: 'run_failed', runId: 'r' });
  });
});
