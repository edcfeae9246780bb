/**
 * Server load: N concurrent SSE runs through POST /api/chat on loopback.
 * Each run: one scripted reply with 3 parallel tool calls (1 ms each), then a text reply.
 * Reports runs/s (N / wall time of a round) and per-run latency (request → end of stream)
 * p50/p95/max, plus time to first event, with no inspector connected (on-demand: XState
 * inspection off) and with one inspector client connected (inspection on, records fanned out).
 * Run: npm run bench:server   (plain node, XState production build)   [N=100 ROUNDS=5]
 */
import { Agent as HttpAgent, request } from 'node:http';
import { z } from 'zod';
import { Agent, tool } from '../src/index.js';
import { ScriptedModel, batch, text } from '../src/entry/testing.js';
import { createServer, type TroupeServer } from '../src/server/index.js';

const N = Number(process.env.N ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 5);

const lookup = tool({
  name: 'lookup',
  description: 'Looks something up.',
  parameters: z.object({ q: z.string() }),
  execute: async ({ q }) => {
    await new Promise((r) => setTimeout(r, 1));
    return `result for ${q}`;
  },
});

const agentFactory = (): Agent =>
  new Agent({
    name: 'load',
    tools: [lookup],
    model: new ScriptedModel(
      [
        batch([
          ['lookup', { q: 'a' }, 'l1'],
          ['lookup', { q: 'b' }, 'l2'],
          ['lookup', { q: 'c' }, 'l3'],
        ]),
        text('All three lookups are done.'),
      ],
      { record: false },
    ),
  });

const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: Infinity });

interface Sample {
  readonly firstEventMs: number;
  readonly totalMs: number;
  readonly events: number;
  readonly ok: boolean;
}

function runOnce(server: TroupeServer): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let first = 0;
    let events = 0;
    let tail = '';
    let last = '';
    const req = request(`${server.url}/api/chat`, {
      method: 'POST',
      agent: httpAgent,
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (!first) first = performance.now();
        tail += chunk;
        let cut: number;
        while ((cut = tail.indexOf('\n\n')) >= 0) {
          const frame = tail.slice(0, cut);
          tail = tail.slice(cut + 2);
          if (frame.includes('\ndata: ')) {
            events++;
            last = frame;
          }
        }
      });
      res.on('end', () =>
        resolve({ firstEventMs: first - start, totalMs: performance.now() - start, events, ok: last.includes('event: run_completed') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ agent: 'load', input: 'look up a, b and c' }));
  });
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function scenario(name: string, withInspector: boolean): Promise<void> {
  const server = await createServer({ agents: { load: agentFactory }, inspect: 'on-demand', maxRuns: N * 2 });
  let inspectorRecords = 0;
  let stopInspector: (() => void) | undefined;
  if (withInspector) {
    // A real SSE client on /api/inspect, reading and parsing every record.
    await new Promise<void>((resolve, reject) => {
      const req = request(`${server.url}/api/inspect`, { headers: { authorization: `Bearer ${server.token}` } });
      req.on('response', (res) => {
        res.setEncoding('utf8');
        let tail = '';
        res.on('data', (chunk: string) => {
          tail += chunk;
          let cut: number;
          while ((cut = tail.indexOf('\n\n')) >= 0) {
            const frame = tail.slice(0, cut);
            tail = tail.slice(cut + 2);
            if (frame.startsWith('id: ')) {
              JSON.parse(frame.slice(frame.indexOf('data: ') + 6));
              inspectorRecords++;
            }
          }
        });
        res.on('error', () => undefined);
        resolve();
      });
      req.on('error', reject);
      req.end();
      stopInspector = () => req.destroy();
    });
  }
  // Warm-up round (JIT, sockets).
  await Promise.all(Array.from({ length: N }, () => runOnce(server)));
  const totals: number[] = [];
  const firsts: number[] = [];
  const rates: number[] = [];
  let failed = 0;
  let events = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    const samples = await Promise.all(Array.from({ length: N }, () => runOnce(server)));
    const wall = performance.now() - start;
    rates.push((N / wall) * 1000);
    for (const s of samples) {
      totals.push(s.totalMs);
      firsts.push(s.firstEventMs);
      events += s.events;
      if (!s.ok) failed++;
    }
  }
  stopInspector?.();
  const stats = server.stats();
  await server.close();
  const f = (v: number) => v.toFixed(1).padStart(7);
  console.log(
    `${name.padEnd(28)} runs/s ${f(pct(rates, 50))} (best ${f(Math.max(...rates))})  latency p50 ${f(pct(totals, 50))} ms  p95 ${f(pct(totals, 95))} ms  max ${f(Math.max(...totals))} ms  first event p95 ${f(pct(firsts, 95))} ms  events/run ${(events / totals.length).toFixed(0)}  failed ${failed}${withInspector ? `  inspector records ${inspectorRecords}` : ''}  (runs kept ${stats.runs})`,
  );
}

console.log(`server load: ${N} concurrent SSE runs per round, ${ROUNDS} rounds (+1 warm-up), loopback, node ${process.version}`);
await scenario('no inspector (inspect off)', false);
await scenario('one inspector connected', true);
