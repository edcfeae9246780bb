/**
 * Property: random runs (batches mixing valid calls, unknown tools, bad JSON, non-object
 * and schema-invalid arguments, duplicate and empty ids, throwing, hanging, huge, retried,
 * timed-out and barrier calls, approvals decided every possible way, cancels after a random
 * event, tool-call budgets, handoffs and nested sub-runs reusing the parent's call ids)
 * keep every invariant in invariants.ts and calls.ts.
 *
 * TROUPE_PROPERTY_RUNS (default 1000) and TROUPE_PROPERTY_SEED choose the cases;
 * a failure prints the seed, the shrunk counterexample and how to replay it.
 */
import { describe, expect, it } from 'vitest';
import { assertScenarios, config } from './property.js';
import { MIXED, scenarioArb } from './arbitraries.js';

const FILE = 'test/property/run.property.test.ts';

describe('run invariants (property)', () => {
  it('hold for random scenarios', { timeout: 300_000 }, async () => {
    const cfg = config(1000);
    const { numRuns, ms, stats } = await assertScenarios('run invariants', FILE, scenarioArb(MIXED), cfg);
    // A replay (TROUPE_PROPERTY_PATH) runs only the given case.
    if (!cfg.path) expect(numRuns).toBe(cfg.numRuns);
    console.log([`run invariants: ${numRuns} cases, seed ${cfg.seed}, ${ms} ms`, ...stats.lines()].join('\n  '));
  });
});
