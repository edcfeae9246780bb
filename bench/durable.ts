/**
 * What durability costs a run, side by side in one process (plain node, XState production build):
 *   W1: one turn of 100 no-op tool calls: no store, MemoryCheckpointStore, SqliteCheckpointStore (synchronous "full")
 *   W3: 200 turns of one call: no store vs MemoryCheckpointStore
 * Each figure is the median of rounds, as ms per run; ratios are to "no store".
 * Run: npm run bench:durable
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, tool, type CheckpointStore } from '../src/index.js';
import { ScriptedModel, batch, call, text } from '../src/entry/testing.js';
import { SqliteCheckpointStore } from '../src/entry/sqlite.js';

const noop = tool({ name: 'noop', description: 'Does nothing.', parameters: z.object({}), execute: () => 'ok' });
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
let runs = 0;

async function w1(store: CheckpointStore | undefined): Promise<number> {
  const model = new ScriptedModel([batch(Array.from({ length: 100 }, (_, i) => ['noop', {}, `c${i}`] as const)), text('done')], { record: false });
  const agent = new Agent({ name: 'w1', model, tools: [noop] });
  const start = performance.now();
  await Runner.run(agent, 'go', store ? { checkpoint: { store, runId: `w1-${runs++}` } } : {});
  return performance.now() - start;
}

async function w3(store: CheckpointStore | undefined): Promise<number> {
  const model = new ScriptedModel([], { record: false });
  for (let i = 0; i < 200; i++) model.push(call('noop', {}, `t${i}`));
  model.push(text('done'));
  const agent = new Agent({ name: 'w3', model, tools: [noop] });
  const start = performance.now();
  await Runner.run(agent, 'go', { maxTurns: 201, ...(store ? { checkpoint: { store, runId: `w3-${runs++}` } } : {}) });
  return performance.now() - start;
}

async function measure(label: string, fn: () => Promise<number>, rounds: number): Promise<number> {
  for (let i = 0; i < 3; i++) await fn(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) times.push(await fn());
  const m = median(times);
  console.log(`${label.padEnd(44)} ${m.toFixed(3)} ms`);
  return m;
}

const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-durable-'));
const sqlite = new SqliteCheckpointStore(join(dir, 'runs.sqlite'));
const memory = new MemoryCheckpointStore();
const w1None = await measure('W1 100 calls, no store', () => w1(undefined), 30);
const w1Memory = await measure('W1 100 calls, MemoryCheckpointStore', () => w1(memory), 30);
const w1Sqlite = await measure('W1 100 calls, SqliteCheckpointStore (full)', () => w1(sqlite), 30);
const w3None = await measure('W3 200 turns, no store', () => w3(undefined), 15);
const w3Memory = await measure('W3 200 turns, MemoryCheckpointStore', () => w3(memory), 15);
console.log(`ratios to no store: W1 memory ${(w1Memory / w1None).toFixed(2)}×, W1 SQLite ${(w1Sqlite / w1None).toFixed(2)}×, W3 memory ${(w3Memory / w3None).toFixed(2)}×`);
sqlite.close();
rmSync(dir, { recursive: true, force: true });
