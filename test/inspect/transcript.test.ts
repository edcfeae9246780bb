import { describe, expect, it } from 'vitest';
import { demoAgent } from '../../src/cli/demo.js';
import { statesFromEvents } from '../../src/inspect/event-state.js';
import { buildTranscript, countItems, type ToolCallItem } from '../../src/inspect/transcript.js';
import { budgetLeft, summarizeUsage } from '../../src/inspect/usage.js';
import type { WireRunEvent } from '../../src/inspect/wire.js';
import { Runner } from '../../src/index.js';
import { serializeRunEvent } from '../../src/server/serialize.js';

/** The demo's real event stream, serialised as the server sends it; the booking is decided by `approve`. */
async function demoEvents(approve: boolean): Promise<WireRunEvent[]> {
  const handle = Runner.stream(demoAgent(), 'Plan a weekend and book the hotel.', { runId: 'run_t' });
  const events: WireRunEvent[] = [];
  for await (const event of handle) {
    if (event.type === 'approval_required') {
      if (approve) event.approve();
      else event.reject('too expensive');
    }
    events.push(serializeRunEvent(event));
  }
  return events;
}

describe('transcript view model', () => {
  it('folds the demo: input, streamed text, handoff, tool calls with args and results, the nested sub-run, the end', async () => {
    const events = await demoEvents(true);
    const tree = buildTranscript(events);
    const root = tree.root!;
    expect(root.runId).toBe('run_t');
    expect(root.items.map((i) => (i.kind === 'tool' ? `tool:${i.tool}:${i.status}` : i.kind === 'assistant' ? `assistant:${i.agent}:${i.text}` : i.kind))).toEqual([
      'user',
      'assistant:Triage:A travel question.',
      'tool:transfer_to_travel_specialist:done',
      'handoff',
      'assistant:Travel specialist:Let me ask Research.',
      'tool:ask_research:done',
      'assistant:Travel specialist:Rome looks warmer. Booking the hotel.',
      'tool:book_hotel:done',
      'assistant:Travel specialist:Rome is 24 °C and clear, the 17:40 flight costs €64, and your hotel is booked for 2 nights (HX-2041).',
      'end',
    ]);
    const book = tree.calls.get('run_t|call_book')!;
    expect(book).toMatchObject({ rawArgs: '{"city":"Rome","nights":"2"}', args: { city: 'Rome', nights: 2 }, output: 'Booked 2 nights in Rome (confirmation HX-2041).', isError: false });
    expect(book.approvalId).toMatch(/.+/);
    const research = tree.calls.get('run_t|call_research') as ToolCallItem;
    const sub = research.subRun!;
    expect(sub.runId).toBe('run_t/2.0');
    expect(sub.agent).toBe('Research');
    const flights = tree.calls.get('run_t/2.0|call_flights')!;
    expect(flights.failures).toEqual([{ attempt: 1, error: { name: 'Error', code: undefined, message: 'flight search timed out upstream' }, willRetry: true }]);
    expect(flights.result).toEqual(['Paris→Rome 08:15 €89', 'Paris→Rome 17:40 €64']);
    expect(flights.output).toBe('Paris→Rome 08:15 €89\nParis→Rome 17:40 €64');
    expect(tree.calls.get('run_t/2.0|call_weather_paris')!.progress).toEqual([{ stage: 'asking the weather service', city: 'Paris' }]);
    expect(root.items.at(-1)).toMatchObject({ kind: 'end', status: 'completed', output: expect.stringContaining('your hotel is booked') });
    expect(countItems(root)).toBe(root.items.length + sub.items.length);
  });

  it('a denied booking: the call is rejected with the denial, and the demo says the booking was not made', async () => {
    const tree = buildTranscript(await demoEvents(false));
    const book = tree.calls.get('run_t|call_book')!;
    expect(book.status).toBe('rejected');
    expect(book.isError).toBe(true);
    expect(book.output).toContain('too expensive');
    const end = tree.root!.items.at(-1)!;
    expect(end).toMatchObject({ kind: 'end', status: 'completed' });
    expect(end.kind === 'end' && end.output).toBe('Rome is 24 °C and clear and the 17:40 flight costs €64, but the hotel was not booked: the booking was denied (too expensive).');
  });

  it('streams text deltas into an open assistant item, and a failed run ends with its error', () => {
    const base = { runId: 'r', path: ['A'], agent: 'A' };
    const tree = buildTranscript([
      { ...base, type: 'run_started', input: 'hi' },
      { ...base, type: 'turn_started', turn: 1 },
      { ...base, type: 'reasoning_delta', turn: 1, delta: 'think' },
      { ...base, type: 'text_delta', turn: 1, delta: 'Hel' },
      { ...base, type: 'text_delta', turn: 1, delta: 'lo' },
    ]);
    expect(tree.root!.items[1]).toMatchObject({ kind: 'assistant', text: 'Hello', reasoning: 'think', streaming: true });
    const failed = buildTranscript([{ ...base, type: 'run_failed', error: { name: 'BudgetExceeded', code: 'BUDGET_EXCEEDED', message: 'over' }, turns: 1 }]);
    expect(failed.root!.status).toBe('failed');
    expect(failed.root!.items).toEqual([{ kind: 'end', status: 'failed', output: undefined, error: { name: 'BudgetExceeded', code: 'BUDGET_EXCEEDED', message: 'over' }, agent: 'A', turns: 1 }]);
  });

  it('usage per turn, run and agent, and budget left', async () => {
    const events = await demoEvents(true);
    const usage = summarizeUsage(events);
    // The root's final total counts the whole tree (sub-runs report their spend up).
    const final = events.find((e) => e.type === 'run_completed' && e.runId === 'run_t')!.usage as Record<string, number>;
    expect(usage.total).toEqual({ inputTokens: final.inputTokens, outputTokens: final.outputTokens, totalTokens: final.totalTokens, requests: 6 });
    // Each reply's own usage: its run's running total grew by it (plus what sub-runs spent meanwhile).
    const replies = events.filter((e) => e.type === 'message_completed');
    expect(usage.turns.map((t) => t.totalTokens)).toEqual(ownTotals(replies));
    expect(usage.turns.map((t) => `${t.runId}:${t.turn}:${t.agent}`)).toEqual(['run_t:1:Triage', 'run_t:2:Travel specialist', 'run_t/2.0:1:Research', 'run_t/2.0:2:Research', 'run_t:3:Travel specialist', 'run_t:4:Travel specialist']);
    expect([...usage.byAgent.keys()]).toEqual(['Triage', 'Travel specialist', 'Research']);
    expect(usage.byRun.get('run_t/2.0')!.requests).toBe(2);
    expect(usage.toolCalls).toBe(6);
    expect(usage.byRun.get('run_t')!.totalTokens + usage.byRun.get('run_t/2.0')!.totalTokens).toBe(final.totalTokens);
    expect(budgetLeft({ maxTotalTokens: 1_000_000, maxToolCalls: 4 }, usage.total, usage.toolCalls, 10)).toEqual([
      { field: 'maxTotalTokens', limit: 1_000_000, used: usage.total.totalTokens, left: 1_000_000 - usage.total.totalTokens },
      { field: 'maxToolCalls', limit: 4, used: 6, left: 0 },
    ]);
  });

  it('chart state from events alone, for runs nobody inspected', async () => {
    const events = await demoEvents(true);
    const states = statesFromEvents(events);
    expect(states.get('run_t')).toEqual(['run', 'run.completed']);
    expect(states.get('run_t/2.0')).toEqual(['run', 'run.completed']);
    const waiting = statesFromEvents(events.slice(0, events.findIndex((e) => e.type === 'approval_required') + 1));
    expect(waiting.get('run_t')).toEqual(['run', 'run.turn', 'run.turn.executing', 'run.turn.executing.approvalWait']);
  });
});

/** Own tokens per reply, computed the long way: root replies minus the sub-run's tokens folded in between. */
function ownTotals(replies: WireRunEvent[]): number[] {
  const totals: number[] = [];
  const last = new Map<string, number>();
  let subSinceRoot = 0;
  for (const reply of replies) {
    const cumulative = (reply.usage as { totalTokens: number }).totalTokens;
    const own = cumulative - (last.get(reply.runId) ?? 0) - (reply.runId === 'run_t' ? subSinceRoot : 0);
    if (reply.runId === 'run_t') subSinceRoot = 0;
    else subSinceRoot += own;
    last.set(reply.runId, cumulative);
    totals.push(own);
  }
  return totals;
}
