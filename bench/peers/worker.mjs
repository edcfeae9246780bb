/**
 * One framework, one fresh process: `node --expose-gc bench/peers/worker.mjs troupe|pi`.
 * Runs every workload through the adapter's `run(turns, options)` and prints one JSON object
 * of metrics on stdout (progress goes to stderr). run.mjs spawns this per framework per round.
 */
if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
const which = process.argv[2];
const adapter = which === 'troupe' ? await import('./troupe.mjs') : which === 'pi' ? await import('./pi.mjs') : null;
if (!adapter) throw new Error('usage: worker.mjs troupe|pi');

const REPS = Number(process.env.BENCH_REPS ?? 200);
const SWEEP = [10, 50, 100, 200, 400];
const W3_TURNS = 200;
const W4_RUNS = 1000;
const W4_CALLS = 5;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const calls = (n) => [n, 0]; // one turn of n calls, then the text reply
const log = (msg) => process.stderr.write(`  [${adapter.name}] ${msg}\n`);

async function time(turns, options) {
  const start = performance.now();
  await adapter.run(turns, options);
  return performance.now() - start;
}

function settle() {
  globalThis.gc();
  globalThis.gc();
}

const out = {};

// W0 cold: the first text-only runs of a fresh process, before any warm-up (the JIT has not
// compiled the run's path yet; what a short-lived process such as a CLI pays).
{
  const t = [];
  for (let i = 0; i < 100; i++) t.push(await time([0]));
  out.w0_cold_us = median(t) * 1000;
}
log(`W0 cold ${out.w0_cold_us.toFixed(1)} µs`);

// Warm-up, so the JIT has compiled every shape before timing starts: the small shapes five
// thousand times each (a troupe run goes through far more functions than a pi run, and V8
// optimizes a function only after many calls; measured, troupe's text-only run reaches its
// steady cost after 3,000–10,000 runs, pi's after about 30), the big ones a few dozen times.
for (let i = 0; i < 5000; i++) {
  await time([0]);
  await time(calls(1));
}
for (let i = 0; i < 30; i++) await time(calls(i % 2 ? 100 : 400));
await time([...Array(W3_TURNS).fill(1), 0]);
settle();

// W0: a text-only run (one request, no tools), its whole cost, warm. The forced full GCs of
// settle() make V8 throw away optimized code that held objects of finished runs ("weak
// objects" deoptimizations): measured right after them, pi's text-only run costs about 3× its
// warm cost and troupe's 3–4×, and both are back after a few thousand runs. So 3,000 untimed
// runs warm it up again first.
{
  for (let i = 0; i < 3000; i++) await time([0]);
  const t = [];
  for (let i = 0; i < REPS * 2; i++) t.push(await time([0]));
  out.w0_us = median(t) * 1000;
}
log(`W0 ${out.w0_us.toFixed(1)} µs`);

// W1: one turn of N calls; µs per call = (median(N-call run) − median(1-call run)) / (N − 1),
// the subtraction removing the run's fixed cost, as bench/orchestration.ts does. Each N-call run
// is paired with a 1-call run right before it, so load drifting on the machine (and the GC debt
// a big run leaves behind) hits both sides of the subtraction alike.
{
  const allOne = [];
  for (const n of SWEEP) {
    const one = [];
    const many = [];
    for (let i = 0; i < REPS; i++) {
      one.push(await time(calls(1)));
      many.push(await time(calls(n)));
    }
    out[`w1_n${n}_us_per_call`] = ((median(many) - median(one)) * 1000) / (n - 1);
    allOne.push(...one);
    settle();
  }
  out.w1_onecall_us = median(allOne) * 1000;
}
log(`W1 ${out.w1_n100_us_per_call.toFixed(2)} µs/call at N=100`);
settle();

// W3: 200 turns of one call. Turn k's cost is the gap between model requests k and k+1, stamped
// by the fake model itself (the same clock for every framework, no event stream needed).
{
  const per = [];
  const early = [];
  const late = [];
  for (let i = 0; i < Math.max(5, Math.round(REPS / 5)); i++) {
    const stamps = [];
    const start = performance.now();
    await adapter.run([...Array(W3_TURNS).fill(1), 0], { stamps });
    per.push((performance.now() - start) / W3_TURNS);
    const gaps = stamps.slice(1).map((t, k) => t - stamps[k]);
    early.push(median(gaps.slice(0, 20)));
    late.push(median(gaps.slice(W3_TURNS - 20, W3_TURNS)));
  }
  out.w3_us_per_turn = median(per) * 1000;
  out.w3_turns_1_20_us = median(early) * 1000;
  out.w3_turns_181_200_us = median(late) * 1000;
  out.w3_late_over_early = out.w3_turns_181_200_us / out.w3_turns_1_20_us;
}
log(`W3 ${out.w3_us_per_turn.toFixed(1)} µs/turn`);
settle();

// W4 throughput: 1,000 runs (one turn of 5 calls, then text) started at once, runs per second.
{
  /** Median runs/s of `timed` passes after `warm` untimed ones; `before` runs before each pass. */
  const passes = async (warm, timed, before) => {
    const rates = [];
    for (let i = 0; i < warm + timed; i++) {
      before();
      const start = performance.now();
      await Promise.all(Array.from({ length: W4_RUNS }, () => adapter.run(calls(W4_CALLS))));
      if (i >= warm) rates.push(W4_RUNS / ((performance.now() - start) / 1000));
    }
    return median(rates);
  };
  // Steady state, what a busy server sees: passes back to back, V8's heap sizing and optimized
  // code carried over from pass to pass (two untimed passes re-warm after W3's settle()).
  out.w4_runs_per_s = await passes(2, 7, () => undefined);
  // After idle: each pass starts right after forced full GCs with no run alive. V8 then frees
  // the hidden classes (maps) of the finished runs' objects, and deoptimizes all optimized code
  // that checks for one of them ("weak objects"): the pass runs mostly unoptimized code while
  // V8 compiles it again. A server that sits idle until its memory reducer runs a full GC pays
  // this on its next burst; one that always has a run alive (one waiting for an approval is
  // enough) keeps those maps, and with them most of its optimized code.
  out.w4_after_idle_runs_per_s = await passes(0, 5, settle);
  settle();
}
log(`W4 ${out.w4_runs_per_s.toFixed(0)} runs/s, after idle ${out.w4_after_idle_runs_per_s.toFixed(0)}`);

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
{
  const samples = [];
  for (let pass = 0; pass < 3; pass++) {
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
  }
  out.w4_kb_per_run = median(samples) / 1024;
}
log(`W4 ${out.w4_kb_per_run.toFixed(1)} KB/run (${out.w4_calls_waiting} calls waiting at peak)`);

process.stdout.write(JSON.stringify({ framework: adapter.name, node: process.version, ...out }) + '\n');
