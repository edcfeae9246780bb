/**
 * shouldStopAfterTurn (issue 29, item 4; CubePi's soft stop): asked after each turn whose
 * reply had calls, once its results are in; true skips the automatic next model call, but a
 * queued steer or follow-up and onRunEnd still start turns.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, tool, type AfterTurn } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { collect, trace } from '../helpers.js';

const lookup = tool({ name: 'lookup', description: 'd', parameters: z.object({ q: z.string() }), execute: ({ q }) => `found ${q}` });

describe('shouldStopAfterTurn', () => {
  it('true after a tool turn: the run completes with its results, without another model call; the predicate sees the turn', async () => {
    const seen: unknown[] = [];
    const model = new ScriptedModel([call('lookup', { q: 'a' }, 'c1'), text('never asked')]);
    const store = new MemoryCheckpointStore();
    const agent = new Agent({
      name: 'a',
      model,
      tools: [lookup],
      hooks: [
        { shouldStopAfterTurn: () => false },
        {
          shouldStopAfterTurn: async ({ message, toolResults, newMessages, ctx }: AfterTurn) => {
            seen.push([message.toolCalls.map((c) => c.id), toolResults.map((r) => r.content), newMessages.map((m) => m.role), ctx.turn]);
            return true;
          },
        },
      ],
    });
    const events = await collect(Runner.stream(agent, 'go', { checkpoint: { store, runId: 's1' } }));
    expect(trace(events, ['text_delta', 'checkpoint_saved'])).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_started:c1', 'tool_call_completed:c1', 'turn_ended', 'run_completed']);
    expect(events.at(-1)).toMatchObject({ type: 'run_completed', output: 'found a' });
    expect(seen).toEqual([[['c1'], ['found a'], ['assistant', 'tool'], 1]]);
    expect(model.requests).toHaveLength(1);
    expect(store.load('s1')!.head).toMatchObject({ status: 'completed', output: 'found a' });
  });

  it('is not asked after a text-only turn; false lets the run go on', async () => {
    let asked = 0;
    const agent = new Agent({ name: 'a', model: new ScriptedModel([call('lookup', { q: 'a' }), text('done')]), tools: [lookup], hooks: { shouldStopAfterTurn: () => (asked++, false) } });
    const result = await Runner.run(agent, 'go');
    expect([result.output, result.turns, asked]).toEqual(['done', 2, 1]);
  });

  it('a soft stop still lets a queued follow-up start a turn (unlike a hard stop)', async () => {
    const model = new ScriptedModel([call('lookup', { q: 'a' }, 'c1'), text('followed up')]);
    const agent = new Agent({ name: 'a', model, tools: [lookup], hooks: { shouldStopAfterTurn: ({ toolResults }) => toolResults.length > 0 } });
    const handle = Runner.stream(agent, 'go');
    handle.followUp('and then?');
    const events = await collect(handle);
    expect(trace(events, ['text_delta'])).toEqual([
      'run_started', 'turn_started', 'message_completed', 'tool_call_started:c1', 'tool_call_completed:c1', 'turn_ended',
      'turn_started', 'user_message_injected', 'message_completed', 'turn_ended', 'run_completed',
    ]);
    expect(events.at(-1)).toMatchObject({ output: 'followed up' });
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: 'user', content: 'and then?' });
  });

  it('a throwing predicate fails the run with a HookError', async () => {
    const agent = new Agent({ name: 'a', model: new ScriptedModel([call('lookup', { q: 'a' })]), tools: [lookup], hooks: { shouldStopAfterTurn: () => { throw new Error('boom'); } } });
    await expect(Runner.run(agent, 'go')).rejects.toThrow('shouldStopAfterTurn hook failed: boom');
  });
});
