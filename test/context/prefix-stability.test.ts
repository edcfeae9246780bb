import { describe, expect, it } from 'vitest';
import { Agent, Runner } from '../../src/index.js';
import { collect } from '../helpers.js';
import { bigTool, compactions, pagesScript, serialize, summaryModel } from './fixtures.js';

describe('contextPolicy: the prompt prefix is byte-stable', () => {
  it('across 50 turns, each request extends the one before byte for byte except at the compaction points', async () => {
    const model = pagesScript(50);
    const summarizer = summaryModel();
    const agent = new Agent({
      name: 'reader',
      instructions: 'Read the pages.',
      model,
      tools: [bigTool(5_000)],
      contextPolicy: { maxInputTokens: 8_000, compactTo: 0.4, summarize: { model: summarizer } },
    });
    const events = await collect(Runner.stream(agent, 'read 50 pages', { maxTurns: 60 }));
    expect(events.at(-1)!.type).toBe('run_completed');
    const requests = model.requests.map(serialize);
    expect(requests).toHaveLength(51);

    const compactedTurns = compactions(events).map((e) => e.turn);
    // Every stage ran at least once over the 50 turns, cheapest first.
    expect(new Set(compactions(events).flatMap((e) => e.stages))).toEqual(new Set(['offload', 'clear', 'summarize']));
    const breaks: number[] = [];
    for (let turn = 2; turn <= requests.length; turn++) {
      if (!requests[turn - 1]!.startsWith(requests[turn - 2]!)) breaks.push(turn);
    }
    // The prefix changes exactly where a compaction happened, and only there.
    expect(breaks).toEqual(compactedTurns);
    expect(compactions(events).map((e) => `${e.turn}:${e.stages.join('+')}`)).toEqual([
      '8:offload', '13:offload+clear', '17:offload+clear', '21:offload+clear', '25:offload+clear', '29:offload+clear',
      '33:offload+clear', '37:offload+clear', '41:offload+clear+summarize', '45:offload+clear', '49:offload+clear+summarize',
    ]);
    // Each summary reuses the one before: two summaries, two summary requests.
    expect(summarizer.requests).toHaveLength(2);
    expect(summarizer.requests[1]!.messages[0]!.content).toMatch(/^The summary so far:\nsummary 1 of \d+ chars\n\nWhat happened next:\n/);
    // After a compaction point the next request extends it again.
    for (const turn of compactedTurns) if (turn < requests.length && !compactedTurns.includes(turn + 1)) expect(requests[turn]!.startsWith(requests[turn - 1]!)).toBe(true);
    // Bounded: no request is larger than the limit allows (about 4 chars a token, plus the newest result).
    for (const request of model.requests) expect(request.messages.reduce((n, m) => n + m.content.length, 0)).toBeLessThan(8_000 * 4);
  });
});
