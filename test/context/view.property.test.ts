/**
 * Property: for random transcripts (user turns, replies with 0-3 calls, results of random
 * size, results in any order), random policies and overheads, the view at every request
 * point (1) never separates a call from its result, (2) keeps every decision (offloaded stays
 * offloaded or goes further, cleared stays cleared), (3) extends the view before it byte
 * for byte unless that point compacted, and (4) is rebuilt identically by a fresh view that
 * only sees the final transcript (what a resumed run does).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextView } from '../../src/context/context-view.js';
import { resolvePolicy, type ContextPolicy } from '../../src/context/policy.js';
import { SUMMARY_HEADER } from '../../src/context/view.js';
import type { Message } from '../../src/index.js';

const turnArb = fc.record({
  user: fc.option(fc.integer({ min: 1, max: 3_000 }), { nil: undefined }),
  text: fc.integer({ min: 0, max: 400 }),
  results: fc.array(fc.record({ size: fc.integer({ min: 0, max: 12_000 }), error: fc.boolean() }), { maxLength: 3 }),
  shuffle: fc.boolean(),
});

const policyArb: fc.Arbitrary<ContextPolicy> = fc.record({
  maxInputTokens: fc.integer({ min: 50, max: 20_000 }),
  compactTo: fc.double({ min: 0.1, max: 0.9, noNaN: true }),
  offload: fc.oneof(fc.constant(false as const), fc.record({ minChars: fc.integer({ min: 1, max: 8_000 }), previewChars: fc.integer({ min: 0, max: 600 }) })),
  clear: fc.constantFrom(false as const, undefined),
  summarize: fc.constantFrom(false as const, {}),
});

type Turn = typeof turnArb extends fc.Arbitrary<infer T> ? T : never;

function transcriptOf(turns: Turn[]): Message[] {
  const out: Message[] = [{ role: 'user', content: 'start' }];
  turns.forEach((turn, t) => {
    if (turn.user !== undefined) out.push({ role: 'user', content: 'u'.repeat(turn.user) });
    const calls = turn.results.map((_, k) => ({ id: `c${t}_${k}`, name: 'tool', arguments: '{}' }));
    out.push({ role: 'assistant', content: 'a'.repeat(turn.text), toolCalls: calls, agent: 'a' });
    const results: Message[] = turn.results.map((r, k) => ({ role: 'tool', callId: `c${t}_${k}`, name: 'tool', content: `${t}.${k}:`.padEnd(r.size, 'r'), isError: r.error }));
    out.push(...(turn.shuffle ? results.reverse() : results));
  });
  return out;
}

const summarizer = async (previous: string | undefined, segment: readonly Message[]) => ({ text: `S(${previous ?? '-'}+${segment.length})`, usage: {} });

type Status = 0 | 1 | 2 | 3; // full, offloaded, cleared, summarised

/** Each transcript index's status in one view (the view is [summary?] + transcript[cut, end)). */
function statuses(view: readonly Message[], transcript: readonly Message[], end: number): Status[] {
  const hasSummary = view[0]?.role === 'user' && view[0].content.startsWith(SUMMARY_HEADER);
  const cut = end - (view.length - (hasSummary ? 1 : 0));
  return Array.from({ length: end }, (_, i): Status => {
    if (i < cut) return 3;
    const shown = view[i - cut + (hasSummary ? 1 : 0)]!;
    const original = transcript[i]!;
    if (shown === original || shown.content === original.content) return 0;
    return shown.content.startsWith('[Result of tool cleared') ? 2 : 1;
  });
}

function pairedCorrectly(view: readonly Message[]): boolean {
  let open: string[] | undefined;
  for (const message of view) {
    if (message.role === 'tool') {
      const at = open?.indexOf(message.callId) ?? -1;
      if (at < 0) return false;
      open!.splice(at, 1);
      continue;
    }
    if (open && open.length > 0) return false;
    open = message.role === 'assistant' ? message.toolCalls.map((c) => c.id) : undefined;
  }
  return !open || open.length === 0;
}

const bytes = (view: readonly Message[]): string => view.map((m) => `${JSON.stringify(m)}\n`).join('');

describe('contextPolicy views (property)', () => {
  it('pair calls with results, keep decisions, extend byte for byte, and rebuild identically', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(turnArb, { minLength: 1, maxLength: 30 }), policyArb, fc.integer({ min: 0, max: 2_000 }), async (turns, policy, overhead) => {
        const transcript = transcriptOf(turns);
        const resolved = resolvePolicy(policy);
        const live = new ContextView(resolved, summarizer);
        const signal = new AbortController().signal;
        const points = transcript.flatMap((m, i) => (m.role === 'assistant' ? [i] : [])).concat(transcript.length);
        let before: { view: Message[]; status: Status[] } | undefined;
        let last: Message[] = [];
        for (const end of points) {
          const prefix = transcript.slice(0, end);
          const built = await live.build(prefix, overhead, "threshold", signal);
          // A copy: the view extends its array in place for the next request (as the live transcript does).
          const view = built.messages.slice();
          expect(pairedCorrectly(view)).toBe(true);
          expect(view[0]?.role).not.toBe('tool');
          const status = statuses(view, transcript, end);
          if (before) {
            before.status.forEach((s, i) => expect(status[i]!).toBeGreaterThanOrEqual(s));
            if (!built.report) expect(bytes(view).startsWith(bytes(before.view))).toBe(true);
          }
          before = { view, status };
          last = view;
        }
        const fresh = await new ContextView(resolved, summarizer).build(transcript.slice(), overhead, 'threshold', signal);
        expect(bytes(fresh.messages)).toBe(bytes(last));
      }),
      { numRuns: 300, seed: 1337 },
    );
  });
});
