/**
 * `npm run bench:peers`: troupe vs @mariozechner/pi-agent-core on the same fake model.
 *   1. installs bench/peers' own dependencies (npm ci, from its lock) if they are missing;
 *   2. compiles troupe as `npm run bench` does (tsconfig.bench.json → node_modules/.troupe-bench);
 *   3. for each round (BENCH_ROUNDS, default 3) spawns one fresh `node --expose-gc worker.mjs`
 *      per framework (order alternating between rounds) and reads its JSON metrics from stdout;
 *      (BENCH_NODE_FLAGS adds node flags to both);
 *   4. prints each round's table and the overall medians, with the ratio troupe/pi per metric.
 * See README.md beside this file.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// BENCH_NODE_FLAGS: extra node flags for both workers (V8 flags such as --no-allocation-site-pretenuring are not allowed in NODE_OPTIONS).
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const started = performance.now();

function sh(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    console.error(`bench:peers: ${[command, ...args].join(' ')} exited with ${result.status}`);
    process.exit(1);
  }
  return result;
}

if (!existsSync(join(here, 'node_modules', '@mariozechner', 'pi-agent-core', 'package.json'))) {
  console.log('bench:peers: installing bench/peers dependencies (npm ci, first use only)');
  // --ignore-scripts: none of the peer's dependencies needs an install script to be imported.
  sh('npm', ['ci', '--prefix', here, '--ignore-scripts', '--no-audit', '--no-fund']);
}

console.log('bench:peers: compiling troupe (tsconfig.bench.json → node_modules/.troupe-bench)');
sh(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.bench.json']);

function worker(framework) {
  const result = spawnSync(process.execPath, ['--expose-gc', ...NODE_FLAGS, join(here, 'worker.mjs'), framework], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 20,
  });
  if (result.status !== 0) {
    console.error(`bench:peers: the ${framework} worker exited with ${result.status}\n${result.stdout}`);
    process.exit(1);
  }
  const metrics = JSON.parse(result.stdout.trim().split('\n').at(-1));
  if (metrics.w4_calls_waiting !== 5000) console.warn(`bench:peers: ${framework}: only ${metrics.w4_calls_waiting} of 5,000 W4 calls were waiting at the memory peak`);
  return metrics;
}

/** [key, label, unit, which way is better] */
const METRICS = [
  ['w0_cold_us', 'W0  text-only run, first 100 of a process', 'µs/run', 'lower'],
  ['w0_us', 'W0  text-only run, fixed cost', 'µs/run', 'lower'],
  ['w1_onecall_us', 'W1  one-call run (the fixed cost subtracted)', 'µs/run', 'lower'],
  ['w1_n100_us_per_call', 'W1  N=100 calls in one turn', 'µs/call', 'lower'],
  ['w1_n10_us_per_call', 'W1  sweep N=10', 'µs/call', 'lower'],
  ['w1_n50_us_per_call', 'W1  sweep N=50', 'µs/call', 'lower'],
  ['w1_n200_us_per_call', 'W1  sweep N=200', 'µs/call', 'lower'],
  ['w1_n400_us_per_call', 'W1  sweep N=400', 'µs/call', 'lower'],
  ['w3_us_per_turn', 'W3  200 turns of one call, whole run / 200', 'µs/turn', 'lower'],
  ['w3_turns_1_20_us', 'W3  turns 1–20 (median gap)', 'µs/turn', 'lower'],
  ['w3_turns_181_200_us', 'W3  turns 181–200 (median gap)', 'µs/turn', 'lower'],
  ['w3_late_over_early', 'W3  turns 181–200 / turns 1–20', '×', 'lower'],
  ['w4_runs_per_s', 'W4  1,000 concurrent runs × 5 calls', 'runs/s', 'higher'],
  ['w4_after_idle_runs_per_s', 'W4  the same, after an idle full GC', 'runs/s', 'higher'],
  ['w4_kb_per_run', 'W4  heap above idle per concurrent run', 'KB/run', 'lower'],
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));

function table(title, rows) {
  const lines = [[title, 'unit', 'troupe', 'pi', 'troupe/pi', 'better'], ...rows];
  const widths = lines[0].map((_, c) => Math.max(...lines.map((l) => String(l[c]).length)));
  console.log('');
  lines.forEach((l, i) => {
    console.log(l.map((cell, c) => (c === 0 || c === 1 || c === 5 ? String(cell).padEnd(widths[c]) : String(cell).padStart(widths[c]))).join('  '));
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  });
}

const rounds = [];
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? ['troupe', 'pi'] : ['pi', 'troupe'];
  console.log(`\nbench:peers: round ${round + 1}/${ROUNDS} (${order.join(', then ')})`);
  const r = {};
  for (const framework of order) r[framework] = worker(framework);
  rounds.push(r);
  table(`round ${round + 1}`, METRICS.map(([key, label, unit, better]) => [label, unit, fmt(r.troupe[key]), fmt(r.pi[key]), fmt(r.troupe[key] / r.pi[key]), better]));
}

const overall = METRICS.map(([key, label, unit, better]) => {
  const t = median(rounds.map((r) => r.troupe[key]));
  const p = median(rounds.map((r) => r.pi[key]));
  const perRound = rounds.map((r) => fmt(r.troupe[key] / r.pi[key])).join(' ');
  return [label, unit, fmt(t), fmt(p), `${fmt(t / p)} (rounds ${perRound})`, better];
});
table(`overall, median of ${ROUNDS} rounds`, overall);
const piVersion = JSON.parse(readFileSync(join(here, 'node_modules', '@mariozechner', 'pi-agent-core', 'package.json'), 'utf8')).version;
console.log(`\nnode ${process.version}, pi-agent-core ${piVersion}, ${ROUNDS} rounds, each framework in a fresh process per round`);
console.log(`bench:peers: done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
