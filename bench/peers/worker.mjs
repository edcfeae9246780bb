/**
 * One framework, one fresh process: `node --expose-gc bench/peers/worker.mjs <framework>` (an id
 * of frameworks.mjs: troupe, pi, ai-sdk, openai-agents, ...). Runs every workload through the
 * adapter's `run(turns, options)` and prints one JSON object of metrics on stdout (progress goes
 * to stderr). run.mjs spawns this per framework per round.
 */
import { loadAdapter } from './frameworks.mjs';

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
const adapter = await loadAdapter(process.argv[2]);

const REPS = Number(process.env.BENCH_REPS ?? 200);
const SWEEP = [10, 50, 100, 200, 400];
const W3_TURNS = 200;
const W4_RUNS = 1000;
const W4_CALLS = 5;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const calls = (n) => [n, 0]; // one turn of n calls, then the text reply
const t0 = performance.now();
const log = (msg) => process.stderr.write(`  [${adapter.name} ${((performance.now() - t0) / 1000).toFixed(0)} s] ${msg}\n`);

async function time(turns, options) {
  const start = performance.now();
  await adapter.run(turns, options);
  return performance.now() - start;
}

/**
 * Runs `body(i)` `max` times, but stops after `min` once `budgetMs` have passed, and returns the
 * count. The timed loops use it so that a framework whose run takes seconds (the OpenAI Agents
 * SDK's turn of 400 calls) gets fewer samples instead of stretching the bench to an hour; fast
 * frameworks reach `max`. The counts each framework got are in its JSON (`reps`).
 */
async function repeat(min, max, budgetMs, body) {
  const start = performance.now();
  let i = 0;
  while (i < max && (i < min || performance.now() - start < budgetMs)) await body(i++);
  return i;
}

function settle() {
  globalThis.gc();
  globalThis.gc();
}

const out = {};
/** How many samples each budgeted loop took (see repeat). */
const reps = {};

/**
 * Workloads the adapter declares it cannot run, `{ w3: 'why' }` (w0, w1, w3 or w4): they are
 * skipped, warm-up included, and their metrics are null (printed as n/a with the reason), never
 * estimated.
 */
const unsupported = adapter.unsupported ?? {};
if (Object.keys(unsupported).length > 0) out.unsupported = unsupported;
const can = (workload) => !(workload in unsupported);

// W0 cold: the first text-only runs of a fresh process, before any warm-up (the JIT has not
// compiled the run's path yet; what a short-lived process such as a CLI pays).
if (can('w0')) {
  const t = [];
  for (let i = 0; i < 100; i++) t.push(await time([0]));
  out.w0_cold_us = median(t) * 1000;
  log(`W0 cold ${out.w0_cold_us.toFixed(1)} µs`);
} else out.w0_cold_us = null;

// Warm-up, so the JIT has compiled every shape before timing starts: the small shapes five
// thousand times each (a troupe run goes through far more functions than a pi run, and V8
// optimizes a function only after many calls; measured, troupe's text-only run reaches its
// steady cost after 3,000–10,000 runs, pi's after about 30), the big ones a few dozen times.
for (let i = 0; i < 5000; i++) {
  if (can('w0')) await time([0]);
  await time(calls(1));
}
if (can('w1')) reps.warmup_100_400 = await repeat(2, 30, 3000, (i) => time(calls(i % 2 ? 100 : 400)));
if (can('w3')) await time([...Array(W3_TURNS).fill(1), 0]);
settle();

// W0: a text-only run (one request, no tools), its whole cost, warm. The forced full GCs of
// settle() make V8 throw away optimized code that held objects of finished runs ("weak
// objects" deoptimizations): measured right after them, pi's text-only run costs about 3× its
// warm cost and troupe's 3–4×, and both are back after a few thousand runs. So 3,000 untimed
// runs warm it up again first.
if (can('w0')) {
  for (let i = 0; i < 3000; i++) await time([0]);
  const t = [];
  for (let i = 0; i < REPS * 2; i++) t.push(await time([0]));
  out.w0_us = median(t) * 1000;
  log(`W0 ${out.w0_us.toFixed(1)} µs`);
} else out.w0_us = null;

// W1: one turn of N calls; µs per call = (median(N-call run) − median(1-call run)) / (N − 1),
// the subtraction removing the run's fixed cost, as bench/orchestration.ts does. Each N-call run
// is paired with a 1-call run right before it, so load drifting on the machine (and the GC debt
// a big run leaves behind) hits both sides of the subtraction alike.
if (can('w1')) {
  const allOne = [];
  for (const n of SWEEP) {
    const one = [];
    const many = [];
    // At least one pair: the OpenAI Agents SDK's run of 400 calls alone takes seconds (see README).
    reps[`w1_n${n}`] = await repeat(1, REPS, 3000, async () => {
      one.push(await time(calls(1)));
      many.push(await time(calls(n)));
    });
    out[`w1_n${n}_us_per_call`] = ((median(many) - median(one)) * 1000) / (n - 1);
    allOne.push(...one);
    settle();
  }
  out.w1_onecall_us = median(allOne) * 1000;
  log(`W1 ${out.w1_n100_us_per_call.toFixed(2)} µs/call at N=100`);
  settle();
} else for (const key of ['w1_onecall_us', ...SWEEP.map((n) => `w1_n${n}_us_per_call`)]) out[key] = null;

// W3: 200 turns of one call. Turn k's cost is the gap between model requests k and k+1, stamped
// by the fake model itself (the same clock for every framework, no event stream needed).
if (can('w3')) {
  const per = [];
  const early = [];
  const late = [];
  reps.w3 = await repeat(3, Math.max(5, Math.round(REPS / 5)), 5000, async () => {
    const stamps = [];
    const start = performance.now();
    await adapter.run([...Array(W3_TURNS).fill(1), 0], { stamps });
    per.push((performance.now() - start) / W3_TURNS);
    const gaps = stamps.slice(1).map((t, k) => t - stamps[k]);
    early.push(median(gaps.slice(0, 20)));
    late.push(median(gaps.slice(W3_TURNS - 20, W3_TURNS)));
  });
  out.w3_us_per_turn = median(per) * 1000;
  out.w3_turns_1_20_us = median(early) * 1000;
  out.w3_turns_181_200_us = median(late) * 1000;
  out.w3_late_over_early = out.w3_turns_181_200_us / out.w3_turns_1_20_us;
  log(`W3 ${out.w3_us_per_turn.toFixed(1)} µs/turn`);
  settle();
} else for (const key of ['w3_us_per_turn', 'w3_turns_1_20_us', 'w3_turns_181_200_us', 'w3_late_over_early']) out[key] = null;

// W4 throughput: 1,000 runs (one turn of 5 calls, then text) started at once, runs per second.
if (can('w4')) {
  /** One pass: 1,000 runs started at once; runs/s. `before` runs first, untimed. */
  const pass = async (before) => {
    before();
    const start = performance.now();
    await Promise.all(Array.from({ length: W4_RUNS }, () => adapter.run(calls(W4_CALLS))));
    return W4_RUNS / ((performance.now() - start) / 1000);
  };
  /**
   * Median runs/s of up to `timed` passes (at least 3, then within `budgetMs`) after up to `warm`
   * untimed ones (at least 1, then within the same budget).
   */
  const passes = async (warm, timed, budgetMs, before, key) => {
    await repeat(1, warm, budgetMs, () => pass(before));
    const rates = [];
    reps[key] = await repeat(3, timed, budgetMs, async () => rates.push(await pass(before)));
    return median(rates);
  };
  // Steady state, what a busy server sees: passes back to back, V8's heap sizing and optimized
  // code carried over from pass to pass (two untimed passes re-warm after W3's settle()).
  out.w4_runs_per_s = await passes(2, 7, 8000, () => undefined, 'w4_steady');
  // After idle: each pass starts right after forced full GCs with no run alive. V8 then frees
  // the hidden classes (maps) of the finished runs' objects, and deoptimizes all optimized code
  // that checks for one of them ("weak objects"): the pass runs mostly unoptimized code while
  // V8 compiles it again. A server that sits idle until its memory reducer runs a full GC pays
  // this on its next burst; one that always has a run alive (one waiting for an approval is
  // enough) keeps those maps, and with them most of its optimized code.
  out.w4_after_idle_runs_per_s = await passes(0, 5, 6000, settle, 'w4_after_idle');
  settle();
  log(`W4 ${out.w4_runs_per_s.toFixed(0)} runs/s, after idle ${out.w4_after_idle_runs_per_s.toFixed(0)}`);
} else for (const key of ['w4_runs_per_s', 'w4_after_idle_runs_per_s', 'w4_kb_per_run']) out[key] = null;

/*
 * W4 memory, measured apart from the timing above so that neither disturbs the other:
 *   1. gc() twice, read process.memoryUsage().heapUsed: the idle heap.
 *   2. Start the 1,000 runs with a tool that waits on a shared gate. Each run gets its first
 *      model reply and enters its 5 calls; once all 5,000 calls wait (or nothing has moved for
 *      a while), every run is alive mid-turn at once: the peak of concurrent state.
 *   3. gc() twice again and read heapUsed: only what the live runs retain is left (garbage
 *      from getting there is collected, so this is retained memory, not allocation churn).
 *   4. (peak − idle) / 1,000 = bytes per concurrent run. It includes the harness's share (the
 *      fake script, the pending promise per run), which is the same for every framework.
 */
if (can('w4')) {
  const samples = [];
  // Three passes, or one when it took over 10 s (retained memory hardly varies: in one full run
  // on a loaded machine, each framework's three rounds agreed within 1%).
  reps.w4_memory = await repeat(1, 3, 10000, async () => {
    settle();
    const idle = process.memoryUsage().heapUsed;
    let entered = 0;
    let open;
    const gate = new Promise((resolve) => (open = resolve));
    const hold = () => { entered++; return gate; };
    const all = Promise.all(Array.from({ length: W4_RUNS }, () => adapter.run(calls(W4_CALLS), { hold })));
    let last = -1;
    let still = 0;
    while (entered < W4_RUNS * W4_CALLS && still < 200) {
      await new Promise((resolve) => setImmediate(resolve));
      still = entered === last ? still + 1 : 0;
      last = entered;
    }
    out.w4_calls_waiting = entered;
    settle();
    const peak = process.memoryUsage().heapUsed;
    open();
    await all;
    samples.push((peak - idle) / W4_RUNS);
  });
  out.w4_kb_per_run = median(samples) / 1024;
  log(`W4 ${out.w4_kb_per_run.toFixed(1)} KB/run (${out.w4_calls_waiting} calls waiting at peak)`);
}

const cpu = process.cpuUsage();
out.wall_s = (performance.now() - t0) / 1000;
out.cpu_s = (cpu.user + cpu.system) / 1e6;
process.stdout.write(JSON.stringify({ framework: adapter.name, node: process.version, ...out, reps }) + '\n');
