/**
 * afterModelResponse may replace the reply (issue 29, item 5; CubePi's reply replacement):
 * its text and calls, before preflight; the replacement is what is stored, announced, run and
 * what the model sees next.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, tool, type RunEvent } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { collect, completed, trace } from '../helpers.js';

const echo = (name: string, ran: string[]) =>
  tool({ name, description: 'd', parameters: z.object({ v: z.string() }), execute: ({ v }) => (ran.push(`${name}:${v}`), `${name} ${v}`) });

describe('afterModelResponse replace', () => {
  it('replaces the calls before preflight: the replaced call runs, the log and the next request hold the replacement', async () => {
    const ran: string[] = [];
    const store = new MemoryCheckpointStore();
    const model = new ScriptedModel([call('risky', { v: '1' }, 'c1'), text('ok')]);
    const agent = new Agent({
      name: 'a',
      model,
      tools: [echo('risky', ran), echo('safe', ran)],
      hooks: {
        afterModelResponse: (reply) =>
          reply.toolCalls[0]?.name === 'risky' ? { replace: { content: 'using safe', toolCalls: [{ id: 'c1', name: 'safe', arguments: '{"v":"2"}' }] } } : undefined,
      },
    });
    const events = await collect(Runner.stream(agent, 'go', { checkpoint: { store, runId: 'rr' } }));
    expect(trace(events, ['text_delta', 'checkpoint_saved'])).toEqual([
      'run_started', 'turn_started', 'message_completed', 'tool_call_started:c1', 'tool_call_completed:c1', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed',
    ]);
    expect((events.find((e) => e.type === 'message_completed') as Extract<RunEvent, { type: 'message_completed' }>).message).toMatchObject({ content: 'using safe', toolCalls: [{ id: 'c1', name: 'safe', arguments: '{"v":"2"}' }] });
    expect(ran).toEqual(['safe:2']);
    expect(completed(events)[0]!.output).toBe('safe 2');
    expect(store.load('rr')!.entries[1]).toMatchObject({ kind: 'reply', message: { content: 'using safe', toolCalls: [{ name: 'safe' }] } });
    expect(model.requests[1]!.messages[1]).toMatchObject({ role: 'assistant', content: 'using safe', toolCalls: [{ id: 'c1', name: 'safe' }] });
  });

  it('replacements apply in hook order and later hooks see them; removing every call makes the replaced text final', async () => {
    const seen: string[] = [];
    const agent = new Agent({
      name: 'a',
      model: new ScriptedModel([call('risky', { v: '1' }, 'c1')]),
      tools: [echo('risky', [])],
      hooks: [
        { afterModelResponse: () => ({ replace: { toolCalls: [] } }) },
        { afterModelResponse: (reply) => (seen.push(`${reply.content}|${reply.toolCalls.length}`), { replace: { content: 'I will not do that.' } }) },
      ],
    });
    const result = await Runner.run(agent, 'go');
    expect(seen).toEqual(['|0']);
    expect(result.output).toBe('I will not do that.');
    expect(result.turns).toBe(1);
  });

  it('a malformed replacement fails the run with a HookError', async () => {
    const agent = new Agent({
      name: 'a',
      model: new ScriptedModel([text('hi')]),
      hooks: { afterModelResponse: () => ({ replace: { toolCalls: [{ id: 'x', name: 'n', arguments: {} }] } }) as never },
    });
    await expect(Runner.run(agent, 'go')).rejects.toThrow(
      'afterModelResponse hook failed: afterModelResponse returned a malformed replace: tool call 1 must be { id: string, name: string, arguments: string (JSON text) }.',
    );
  });
});
