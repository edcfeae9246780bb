import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, tool } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { collect, deferred, flush } from '../helpers.js';
import { compactions, pageText, serialize, summaryModel } from './fixtures.js';

const TURNS = 14;
const policy = { maxInputTokens: 3_000, offload: { previewChars: 100 } };
type Policy = typeof policy & { summarize?: { model: ScriptedModel } };

function script(from: number): ScriptedModel {
  const model = new ScriptedModel([]);
  for (let i = from; i <= TURNS; i++) model.push(call('fetch_page', { n: i }, `c${i}`));
  return model.push(text('done'));
}

/** fetch_page; with `hangAt`, that call never returns (the process "crashes" while it runs). */
function pages(hangAt?: number, reached?: () => void) {
  return tool({
    name: 'fetch_page',
    description: 'Returns a page.',
    parameters: z.object({ n: z.number() }),
    execute: ({ n }) => {
      if (n !== hangAt) return pageText(n, 5_000);
      reached?.();
      return new Promise<string>(() => {});
    },
  });
}

/** Runs to the end, and again crashing while call `c<crashAt>` runs, then resumes in a "new process". */
async function crashAndResume(policyFor: () => Policy, crashAt: number) {
  const whole = script(1);
  const wholeEvents = await collect(Runner.stream(new Agent({ name: 'reader', model: whole, tools: [pages()], contextPolicy: policyFor() }), 'read', { maxTurns: 20 }));
  const store = new MemoryCheckpointStore();
  const reached = deferred<void>();
  const first = Runner.stream(new Agent({ name: 'reader', model: script(1), tools: [pages(crashAt, () => reached.resolve())], contextPolicy: policyFor() }), 'read', { maxTurns: 20, checkpoint: { store, runId: 'r1' } });
  const reading = collect(first);
  await reached.promise;
  await flush();
  const saved = store.load('r1')!;
  const crashed = new MemoryCheckpointStore();
  crashed.append('r1', saved.entries, saved.head);
  first.cancel('crash');
  await reading;
  const rest = script(crashAt + 1);
  const resumedPolicy = policyFor();
  const resumed = Runner.stream(new Agent({ name: 'reader', model: rest, tools: [pages()], contextPolicy: resumedPolicy }), 'read', { maxTurns: 20, checkpoint: { store: crashed, runId: 'r1' } });
  const after = await collect(resumed);
  return { whole, wholeEvents, saved, rest, after, output: (await resumed.result()).output, resumedPolicy };
}

describe('contextPolicy: a resumed run rebuilds the same view', () => {
  it('with summaries too, when the summariser answers the same again', async () => {
    const { whole, wholeEvents, rest, output, resumedPolicy } = await crashAndResume(() => ({ ...policy, maxInputTokens: 2_500, summarize: { model: summaryModel() } }), 9);
    expect(output).toBe('done');
    const summarisedBefore = compactions(wholeEvents).filter((e) => e.turn <= 9 && e.stages.includes('summarize')).length;
    expect(summarisedBefore).toBeGreaterThan(0);
    expect(rest.requests.map(serialize)).toEqual(whole.requests.slice(9).map(serialize));
    // The summaries' texts are not in the transcript: the resumed run asked for each again.
    expect(resumedPolicy.summarize!.model.requests.length).toBe(compactions(wholeEvents).filter((e) => e.stages.includes('summarize')).length);
  });

  it('sends the same request bytes after resuming mid-run as the run that never stopped', async () => {
    const { whole, wholeEvents, saved, rest, after, output } = await crashAndResume(() => policy, 9);
    expect(wholeEvents.at(-1)!.type).toBe('run_completed');
    // Compactions happen before and after the crash point, so both the replayed and the new decisions are checked.
    expect(compactions(wholeEvents).map((e) => [e.turn, e.stages.join('+')])).toEqual([
      [4, 'offload'], [6, 'offload'], [7, 'offload+clear'], [8, 'offload+clear'], [9, 'offload+clear'],
      [10, 'offload+clear'], [11, 'offload+clear'], [12, 'offload+clear'], [13, 'offload+clear'], [14, 'offload+clear'], [15, 'offload+clear'],
    ]);
    expect(saved.entries.filter((e) => e.kind === 'reply')).toHaveLength(9);
    expect(output).toBe('done');
    expect(rest.requests.map(serialize)).toEqual(whole.requests.slice(9).map(serialize));
    // The decisions made before the crash are replayed silently; the new ones are announced.
    expect(compactions(after).map((e) => e.turn)).toEqual([10, 11, 12, 13, 14, 15]);
  });

});
