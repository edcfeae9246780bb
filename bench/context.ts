/**
 * contextPolicy on a long run (scripted model, no I/O).
 *   W3-context: 200 turns, each calling a tool that returns 20,000 characters, with
 *   compaction on (maxInputTokens 32,000, summaries by a scripted summariser):
 *   µs per turn, turns 1–20 vs 181–200, and the size of each request the model is sent.
 *   The same run without a policy is shown for reference (its requests grow without bound).
 * Run: npm run bench:context   (plain node conditions, i.e. XState's production build)
 */
import { z } from 'zod';
import { Agent, Runner, tool, type ContextPolicy, type Model, type ModelRequest } from '../src/index.js';
import { ScriptedModel, call, text } from '../src/entry/testing.js';

const TURNS = 200;
const RESULT_CHARS = 20_000;
const pages = Array.from({ length: TURNS + 1 }, (_, n) => `page ${n}: ${'lorem ipsum '.repeat(RESULT_CHARS / 12 + 1)}`.slice(0, RESULT_CHARS));
const fetchPage = tool({ name: 'fetch_page', description: 'Returns a page.', parameters: z.object({ n: z.number() }), execute: ({ n }) => pages[n]! });

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

function script(): ScriptedModel {
  const model = new ScriptedModel([], { record: false });
  for (let i = 1; i <= TURNS; i++) model.push(call('fetch_page', { n: i }, `c${i}`));
  return model.push(text('done'));
}

function summarizer(): ScriptedModel {
  const model = new ScriptedModel([], { record: false });
  for (let i = 0; i < TURNS; i++) model.push({ text: '', calls: [], respond: () => ({ text: `Summary ${i + 1}: pages were fetched; nothing else happened. `.repeat(4) }) });
  return model;
}

const policy = (): ContextPolicy => ({ maxInputTokens: 32_000, summarize: { model: summarizer() } });

/** Records the size of each request (characters of system prompt, tool schemas and messages). */
class Measured implements Model {
  readonly name = 'measured';
  readonly sizes: number[] = [];
  constructor(private readonly inner: Model) {}
  stream(request: ModelRequest) {
    this.sizes.push(request.system.length + JSON.stringify(request.tools).length + request.messages.reduce((n, m) => n + m.content.length + (m.role === 'assistant' ? JSON.stringify(m.toolCalls).length : 0), 0));
    return this.inner.stream(request);
  }
}

async function perTurn(contextPolicy: ContextPolicy | undefined): Promise<{ times: number[]; compactions: number }> {
  const agent = new Agent({ name: 'w3c', model: script(), tools: [fetchPage], ...(contextPolicy ? { contextPolicy } : {}) });
  const stamps: number[] = [];
  let compactions = 0;
  const handle = Runner.stream(agent, 'go', { maxTurns: TURNS + 1 });
  for await (const event of handle) {
    if (event.type === 'turn_started') stamps.push(performance.now());
    else if (event.type === 'context_compacted') compactions++;
  }
  stamps.push(performance.now());
  return { times: stamps.slice(1).map((t, i) => t - stamps[i]!), compactions };
}

async function sizes(contextPolicy: ContextPolicy | undefined): Promise<number[]> {
  const model = new Measured(script());
  await Runner.run(new Agent({ name: 'w3c', model, tools: [fetchPage], ...(contextPolicy ? { contextPolicy } : {}) }), 'go', { maxTurns: TURNS + 1 });
  return model.sizes;
}

for (let i = 0; i < 3; i++) { await perTurn(policy()); await perTurn(undefined); }
for (const [label, make] of [['compaction on ', policy], ['no policy     ', () => undefined]] as const) {
  const early: number[] = [];
  const late: number[] = [];
  const earlyMean: number[] = [];
  const lateMean: number[] = [];
  let compactions = 0;
  for (let run = 0; run < 15; run++) {
    const result = await perTurn(make());
    early.push(median(result.times.slice(0, 20)));
    late.push(median(result.times.slice(180, 200)));
    earlyMean.push(mean(result.times.slice(0, 20)));
    lateMean.push(mean(result.times.slice(180, 200)));
    compactions = result.compactions;
  }
  const e = median(early) * 1000;
  const l = median(late) * 1000;
  // Means include the compaction turns (about one in three here), which the medians skip.
  const em = median(earlyMean) * 1000;
  const lm = median(lateMean) * 1000;
  const size = await sizes(make());
  const kb = (n: number) => `${(n / 1000).toFixed(1)}k`;
  console.log(
    `W3-context ${label} 200 turns × ${RESULT_CHARS} chars: turns 1–20 ${e.toFixed(1)} µs/turn, turns 181–200 ${l.toFixed(1)} µs/turn, ratio ${(l / e).toFixed(2)} (means ${em.toFixed(1)} / ${lm.toFixed(1)} µs, ratio ${(lm / em).toFixed(2)}); ` +
      `${compactions} compactions; request chars: turn 20 ${kb(size[19]!)}, turn 100 ${kb(size[99]!)}, turn 200 ${kb(size[199]!)}, max ${kb(Math.max(...size))}`,
  );
}
