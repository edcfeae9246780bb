/**
 * Checkpoint store write cost: µs per append (one entry per append, as the run log writes
 * them) for a 10-turn run and a 1,000-turn run on SqliteCheckpointStore, both `synchronous`
 * modes, and MemoryCheckpointStore for reference. A save must not get slower as the run
 * grows: compare turns 1–10 with turns 991–1000 of the long run.
 *
 *   npx tsx bench/store.ts            (files go to a temporary folder on the same disk as /tmp)
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { MemoryCheckpointStore, type CheckpointEntry, type CheckpointHead, type CheckpointStore } from '../src/store/checkpoint-store.js';
import { SqliteCheckpointStore } from '../src/store/sqlite-checkpoint-store.js';

type SyncStore = CheckpointStore & { append(runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead): void; close(): void };

const REPLY_TEXT = 'Looking that up for you. '.repeat(8); // ~200 chars
const RESULT_TEXT = JSON.stringify({ rows: Array.from({ length: 12 }, (_, i) => ({ id: i, name: `item ${i}`, price: 10 + i })) }); // ~500 chars

function head(turn: number, status: CheckpointHead['status'] = 'running'): CheckpointHead {
  return { agent: 'bench', turn, usage: { inputTokens: 100 * turn, outputTokens: 20 * turn, totalTokens: 120 * turn, requests: turn }, status };
}

/** Runs `turns` turns (reply with one call, its result, turn end); returns µs per append, per turn. */
function run(store: SyncStore, runId: string, turns: number): number[][] {
  store.append(runId, [{ kind: 'input', message: { role: 'user', content: 'start' } }], head(0));
  const perTurn: number[][] = [];
  for (let turn = 1; turn <= turns; turn++) {
    const entries: CheckpointEntry[] = [
      { kind: 'reply', turn, message: { role: 'assistant', content: REPLY_TEXT, toolCalls: [{ id: `c${turn}`, name: 'lookup', arguments: '{"q":"x"}' }], agent: 'bench' } },
      { kind: 'result', turn, message: { role: 'tool', callId: `c${turn}`, name: 'lookup', content: RESULT_TEXT, isError: false } },
      { kind: 'turn_end', turn },
    ];
    const times: number[] = [];
    for (const entry of entries) {
      const t0 = performance.now();
      store.append(runId, [entry], head(turn, turn === turns && entry.kind === 'turn_end' ? 'completed' : 'running'));
      times.push((performance.now() - t0) * 1000);
    }
    perTurn.push(times);
  }
  return perTurn;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const fmt = (us: number) => us.toFixed(1).padStart(8);

interface Row {
  store: string;
  short: number[];
  early: number[];
  late: number[];
  loadMs: number;
  fileKiB: number | undefined;
}

function bench(name: string, make: (dir: string) => SyncStore): Row {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-store-'));
  try {
    const store = make(dir);
    run(store, 'warmup', 20);
    // 10-turn runs: 20 of them, every append counted.
    const short: number[] = [];
    for (let i = 0; i < 20; i++) for (const turn of run(store, `short-${i}`, 10)) short.push(...turn);
    // One 1,000-turn run: appends of turns 1–10 against those of turns 991–1000.
    const long = run(store, 'long', 1000);
    const early = long.slice(0, 10).flat();
    const late = long.slice(990).flat();
    const t0 = performance.now();
    const loaded = store.load('long') as { entries: readonly CheckpointEntry[] };
    const loadMs = performance.now() - t0;
    if (loaded.entries.length !== 3001) throw new Error(`expected 3001 entries, loaded ${loaded.entries.length}`);
    store.close();
    const file = join(dir, 'runs.db');
    let fileKiB: number | undefined;
    try {
      fileKiB = statSync(file).size / 1024;
    } catch {
      fileKiB = undefined;
    }
    return { store: name, short, early, late, loadMs, fileKiB };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [
  bench('sqlite, synchronous full (default)', (dir) => new SqliteCheckpointStore(join(dir, 'runs.db'))),
  bench('sqlite, synchronous normal', (dir) => new SqliteCheckpointStore(join(dir, 'runs.db'), { synchronous: 'normal' })),
  bench('memory', () => new MemoryCheckpointStore()),
];

console.log(`node ${process.version}, one entry per append (reply ~${REPLY_TEXT.length} chars, result ~${RESULT_TEXT.length} chars), µs per append`);
console.log('');
console.log(`${'store'.padEnd(36)} ${'10-turn median'.padStart(14)} ${'mean'.padStart(8)} │ ${'1000-turn: t1–10 med'.padStart(20)} ${'t991–1000 med'.padStart(13)} ${'ratio'.padStart(6)} │ ${'load 3001 entries'.padStart(17)}`);
for (const r of rows) {
  const ratio = median(r.late) / median(r.early);
  console.log(
    `${r.store.padEnd(36)} ${fmt(median(r.short)).padStart(14)} ${fmt(mean(r.short))} │ ${fmt(median(r.early)).padStart(20)} ${fmt(median(r.late)).padStart(13)} ${ratio.toFixed(2).padStart(6)} │ ${`${r.loadMs.toFixed(1)} ms`.padStart(17)}` +
      (r.fileKiB === undefined ? '' : `   (file ${r.fileKiB.toFixed(0)} KiB)`),
  );
}
