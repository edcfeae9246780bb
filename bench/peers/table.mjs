/**
 * The metrics of the peer bench and how run.mjs prints them: one row per metric, one column per
 * framework, then one ratio column per peer.
 */

/** [key in a worker's JSON, label, unit, which way is better] */
export const METRICS = [
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

/** The middle value (the upper middle for an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Two or three significant digits (small ratios too: 0.0021, not 0.00); `n/a` for a metric a framework could not measure. */
export function fmt(x) {
  if (x == null || Number.isNaN(x)) return 'n/a';
  const a = Math.abs(x);
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 0.1 || a === 0) return x.toFixed(2);
  return x.toPrecision(2);
}

/**
 * Prints `[label, unit, ...values, better]` rows under a header, the text columns left-aligned
 * and the numbers right-aligned, then `notes` one a line.
 */
export function printTable(title, valueHeaders, rows, notes = []) {
  const lines = [[title, 'unit', ...valueHeaders, 'better'], ...rows];
  const last = lines[0].length - 1;
  const widths = lines[0].map((_, c) => Math.max(...lines.map((l) => String(l[c]).length)));
  const left = (c) => c === 0 || c === 1 || c === last;
  console.log('');
  lines.forEach((l, i) => {
    console.log(l.map((cell, c) => (left(c) ? String(cell).padEnd(widths[c]) : String(cell).padStart(widths[c]))).join('  ').trimEnd());
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  });
  for (const note of notes) console.log(`  note: ${note}`);
}
