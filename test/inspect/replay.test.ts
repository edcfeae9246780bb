import { describe, expect, it } from 'vitest';
import { demoAgent } from '../../src/cli/demo.js';
import { replayAt, type WireEntry } from '../../src/inspect/replay.js';
import type { RunStatus } from '../../src/run-status.js';
import { agentGraph } from '../../src/inspect/topology.js';
import { Agent, MemoryCheckpointStore, Runner, tool } from '../../src/index.js';
import { ScriptedModel, text } from '../../src/entry/testing.js';
import { z } from 'zod';

async function storedDemo(): Promise<{ entries: WireEntry[]; status: RunStatus }> {
  const store = new MemoryCheckpointStore();
  const handle = Runner.stream(demoAgent(), 'Plan a weekend.', { checkpoint: { store, runId: 'run_r' } });
  for await (const event of handle) if (event.type === 'approval_required') event.approve();
  const run = store.load('run_r')!;
  return { entries: JSON.parse(JSON.stringify(run.entries)) as WireEntry[], status: run.head.status };
}

describe('replay of a stored run', () => {
  it('step N shows the first N entries as N items and the chart state after them', async () => {
    const { entries, status } = await storedDemo();
    expect(entries.map((e) => e.kind)).toEqual([
      'input', 'reply', 'result', 'turn_end', 'handoff',
      'reply', 'subrun_start', 'subrun_end', 'result', 'turn_end',
      'reply', 'approval_request', 'approval_decision', 'result', 'turn_end',
      'reply', 'turn_end',
    ]);
    expect(replayAt(entries, 0, status)).toEqual({ step: 0, items: [], active: ['run', 'run.starting'], turn: 0, agent: undefined });
    const one = replayAt(entries, 1, status);
    expect(one.items).toEqual([{ kind: 'input', index: 0, role: 'user', text: 'Plan a weekend.' }]);
    expect(one.active).toEqual(['run', 'run.turn', 'run.turn.model']);
    const two = replayAt(entries, 2, status);
    expect(two.items[1]).toEqual({ kind: 'reply', index: 1, turn: 1, agent: 'Triage', text: 'A travel question.', reasoning: '', calls: [{ id: 'call_handoff', name: 'transfer_to_travel_specialist', arguments: '{"reason":"trip planning"}' }] });
    expect(two.active).toEqual(['run', 'run.turn', 'run.turn.executing']);
    expect(replayAt(entries, 3, status).active).toEqual(['run', 'run.turn', 'run.turn.checkpoint']);
    // The handoff, sub-run and approval entries are shown as generic items with their payload.
    expect(replayAt(entries, 5, status).items[4]).toEqual({ kind: 'other', index: 4, entryKind: 'handoff', payload: { kind: 'handoff', turn: 1, from: 'Triage', to: 'Travel specialist' } });
    const nine = replayAt(entries, 9, status);
    expect(nine.items).toHaveLength(9);
    expect(nine.agent).toBe('Travel specialist');
    expect(nine.items[8]).toMatchObject({ kind: 'result', callId: 'call_research', tool: 'ask_research', isError: false, content: expect.stringContaining('Rome 24 °C') });
    const last = replayAt(entries, entries.length, status);
    expect(last.active).toEqual(['run', 'run.completed']);
    expect(last.items.at(-2)).toMatchObject({ kind: 'reply', text: expect.stringContaining('your hotel is booked') });
    // Out-of-range steps are clamped.
    expect(replayAt(entries, 99, status).step).toBe(entries.length);
    expect(replayAt(entries, -3, status).step).toBe(0);
  });

  it('shows entry kinds it does not know as generic items and keeps the chart where it was', () => {
    const entries: WireEntry[] = [
      { kind: 'input', message: { role: 'user', content: 'hi' } },
      { kind: 'a_future_kind', callId: 'k1', decision: 'deny' },
    ];
    const state = replayAt(entries, 2, 'running');
    expect(state.items[1]).toEqual({ kind: 'other', index: 1, entryKind: 'a_future_kind', payload: { kind: 'a_future_kind', callId: 'k1', decision: 'deny' } });
    expect(state.active).toEqual(['run', 'run.turn', 'run.turn.model']);
  });
});

describe('agent topology', () => {
  it('the demo: a handoff edge, an agent-as-tool edge and the plain tools of each agent', () => {
    expect(agentGraph(demoAgent())).toEqual({
      root: 'Triage',
      agents: [
        { name: 'Triage', instructions: 'Send each request to the right specialist.', tools: [] },
        { name: 'Travel specialist', instructions: 'Plan trips. Ask Research for facts, then book.', tools: ['book_hotel'] },
        { name: 'Research', instructions: 'Collect facts with your tools, in parallel where you can.', tools: ['weather', 'flights'] },
      ],
      edges: [
        { from: 'Triage', to: 'Travel specialist', kind: 'handoff', tool: 'transfer_to_travel_specialist' },
        { from: 'Travel specialist', to: 'Research', kind: 'tool', tool: 'ask_research' },
      ],
    });
  });

  it('handoff cycles are walked once; two agents with one name are two nodes; function instructions are not shown', () => {
    const noop = tool({ name: 'noop', description: 'x', parameters: z.object({}), execute: () => 'ok' });
    const a = new Agent({ name: 'A', instructions: () => 'dynamic', model: new ScriptedModel([text('x')]), tools: [noop] });
    const b = new Agent({ name: 'B', model: new ScriptedModel([]), handoffs: [a] });
    const twin = new Agent({ name: 'A', model: new ScriptedModel([]) });
    a.handoffs.push(b, twin);
    const graph = agentGraph(a);
    expect(graph.agents.map((n) => [n.name, n.instructions, n.tools])).toEqual([['A', undefined, ['noop']], ['B', '', []], ['A#2', '', []]]);
    expect(graph.edges.map((e) => `${e.from}->${e.to}:${e.kind}`)).toEqual(['A->B:handoff', 'A->A#2:handoff', 'B->A:handoff']);
  });
});
