import { describe, expect, it } from 'vitest';
import { coverageTable, exploreAgent, type ExploredPath } from '../../src/entry/testing.js';
import { demoAgent } from '../../src/cli/demo.js';

// The demo system (src/cli/demo.ts): triage hands off to a travel specialist, which asks a
// research agent (as a tool, maxTurns 4) and books a hotel behind an approval.
const bookedOnlyWhenApproved = {
  name: 'a hotel is booked only when approved',
  check: (path: ExploredPath) => {
    const approved = new Set(path.events.flatMap((e) => (e.type === 'approval_required' ? [e.call.id] : [])));
    const booked = path.events.filter((e) => e.type === 'tool_call_completed' && e.call.name === 'book_hotel' && !e.isError);
    return booked.every((e) => approved.has((e as { call: { id: string } }).call.id));
  },
};

describe('exploring the demo agent system', () => {
  it('walks its 123 paths at two calls per run, breaks no invariant, and shows what it covered', async () => {
    const exploration = await exploreAgent(demoAgent(), { maxCallsPerRun: 2, invariants: [bookedOnlyWhenApproved] });
    expect(exploration.paths).toHaveLength(123);
    expect(exploration.truncated).toBe(false);
    expect(exploration.failures).toEqual([]);
    const outcomes = exploration.paths.map((p) => p.outcome);
    expect([outcomes.filter((o) => o === 'completed').length, outcomes.filter((o) => o === 'cancelled').length]).toEqual([36, 87]);
    // The handoff, the sub-run and the gated booking are all on some path.
    expect(exploration.paths.filter((p) => p.steps.includes('Travel specialist handoff_occurred Triage -> Travel specialist')).length).toBe(121);
    expect(exploration.paths.filter((p) => p.steps.includes('Travel specialist > Research run_started')).length).toBe(111);
    expect(exploration.paths.filter((p) => p.steps.includes('Travel specialist tool_call_completed book_hotel ok')).length).toBe(2);
    const table = coverageTable(exploration.coverage).split('\n');
    expect(table[0]).toBe('run chart, 123 runs: states 18/33 (55%), transitions 25/85 (29%)');
    expect(table.slice(table.indexOf('agent Triage:'))).toEqual([
      'agent Triage:',
      '  tool transfer_to_travel_specialist: 121 ok, 0 error',
      '  handoff to Travel specialist: 121',
      'agent Travel specialist:',
      '  tool ask_research: 62 ok, 49 error',
      '  tool book_hotel: 2 ok, 6 error',
      '  approvals: 5 approved, 2 denied',
      'agent Research:',
      '  tool weather: 36 ok, 42 error',
      '  tool flights: 0 ok, 120 error',
    ]);
    // The flights tool renders its result with rows.join: the scripted default (a string) breaks
    // it, so every flights call is an error result — a finding the exploration makes visible.
    expect(exploration.coverage.agents.find((a) => a.agent === 'Research')!.tools).toEqual({ weather: { ok: 36, error: 42 }, flights: { ok: 0, error: 120 } });
    expect(exploration.coverage.agents.find((a) => a.agent === 'Travel specialist')!.approvals).toEqual({ approved: 5, denied: 2 });
  }, 120_000);
});
