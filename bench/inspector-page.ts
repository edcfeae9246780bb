/**
 * Inspector page responsiveness: 200 runs in the list and one run of 1,000 tool calls
 * (5 turns of 200 parallel calls), streamed to a page open in Chromium (playwright-core,
 * Debian's /usr/bin/chromium). Reports the time of each update batch (the page's
 * `troupe.render` measures), and what the feed costs a run when no page is open.
 *
 *   npm run build:inspector && npx tsx bench/inspector-page.ts
 */
import { z } from 'zod';
import { chromium } from 'playwright-core';
import { Agent, Runner, tool } from '../src/index.js';
import { ScriptedModel, batch, text } from '../src/entry/testing.js';
import type { InspectMode } from '../src/inspect/feed.js';
import { createServer } from '../src/server/index.js';

const echo = tool({ name: 'echo', description: 'Echo.', parameters: z.object({ n: z.number() }), execute: async ({ n }) => ({ n, ok: true }) });
const bigAgent = (): Agent =>
  new Agent({
    name: 'big',
    tools: [echo],
    model: new ScriptedModel([...Array.from({ length: 5 }, (_, t) => batch(Array.from({ length: 200 }, (_, i) => ['echo', { n: t * 200 + i }, `c${t}_${i}`] as const))), text('all done')]),
  });
const smallAgent = (): Agent => new Agent({ name: 'small', tools: [echo], model: new ScriptedModel([batch([['echo', { n: 1 }, 'a']]), text('ok')]) });

async function post(url: string, token: string, agent: string): Promise<void> {
  const res = await fetch(`${url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ agent, input: 'go' }) });
  await res.text();
}

function stats(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
  return `n=${sorted.length} p50=${at(0.5)} ms p95=${at(0.95)} ms max=${sorted.at(-1)!.toFixed(1)} ms`;
}

async function page(): Promise<void> {
  const server = await createServer({ agents: { big: bigAgent, small: smallAgent }, inspect: 'always', maxRuns: 250 });
  for (let i = 0; i < 199; i++) await post(server.url, server.token, 'small');
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'] });
  const tab = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await tab.goto(server.inspectorUrl);
  await tab.waitForSelector('#conn[data-state="open"]');
  await tab.waitForFunction(() => /149 older runs/.test(document.querySelector('#runs li.more')?.textContent ?? ''));
  await tab.evaluate(() => performance.clearMeasures('troupe.render'));
  const run = post(server.url, server.token, 'big');
  const samples: number[] = [];
  const collect = async () => samples.push(...(await tab.evaluate(() => { const d = performance.getEntriesByName('troupe.render').map((e) => e.duration); performance.clearMeasures('troupe.render'); return d; })));
  const timer = setInterval(() => void collect(), 200);
  await run;
  await tab.waitForSelector('#runs li.run[data-status="completed"][data-run] >> nth=0');
  await tab.waitForFunction(() => document.querySelectorAll('#transcript .t-tool').length > 0 && document.querySelector('#run-state')?.textContent === 'completed', undefined, { timeout: 60_000 });
  await tab.waitForTimeout(500);
  const sections = await tab.evaluate(() => ['troupe.render.transcript', 'troupe.render.timeline', 'troupe.render.tree', 'troupe.render.run'].map((name) => [name, Math.max(...performance.getEntriesByName(name).map((e) => e.duration))]));
  clearInterval(timer);
  await collect();
  const streaming = [...samples];
  samples.length = 0;
  for (const button of ['#tl-in', '#tl-in', '#tl-left', '#tl-reset', '#chart-in', '#zoom']) {
    await tab.click(button);
    await tab.waitForTimeout(50);
  }
  await collect();
  console.log(`runs: ${await tab.locator('#runs li.run').count()} rows drawn (${await tab.locator('#runs li.more').textContent()}), tool calls drawn in the transcript: ${await tab.locator('#transcript .t-tool').count()} of 1000, lanes: ${await tab.locator('#timeline .lane').count()}`);
  console.log(`update batches while the 1,000-call run streamed: ${stats(streaming)} (all: ${streaming.map((v) => v.toFixed(0)).join(', ')})`);
  for (const [name, max] of sections) console.log(`  slowest ${name}: ${(max as number).toFixed(1)} ms`);
  console.log(`update batches on zoom/pan clicks after it: ${stats(samples)}`);
  await browser.close();
  await server.close();
}

async function feedCost(): Promise<void> {
  for (const mode of ['off', 'on-demand', 'always'] as InspectMode[]) {
    const server = await createServer({ agents: { big: bigAgent }, inspect: mode });
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await post(server.url, server.token, 'big');
      times.push(performance.now() - t0);
    }
    console.log(`1,000-call run through the server, inspect=${mode}, no page open: ${stats(times)}`);
    await server.close();
  }
  // Baseline without the server.
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await Runner.run(bigAgent(), 'go');
    times.push(performance.now() - t0);
  }
  console.log(`1,000-call run with Runner.run (no server, no feed): ${stats(times)}`);
}

await page();
await feedCost();
