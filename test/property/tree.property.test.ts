/**
 * Property: run trees. Sub-runs (agent.asTool) nested up to three levels whose models
 * reuse the parent's call ids, with approvals waiting in several runs at once ("ask"
 * handlers decided later by approvalId, by a bare call id (ambiguous ones must throw
 * UserError), by { runId, callId } or by release), barriers and handoffs inside sub-runs.
 * Same invariants as run.property.test.ts.
 *
 * TROUPE_PROPERTY_RUNS (default 1000, which gives this file 300) and TROUPE_PROPERTY_SEED.
 */
import { describe, expect, it } from 'vitest';
import { TREE, scenarioArb } from './arbitraries.js';
import { assertScenarios, config } from './property.js';

const FILE = 'test/property/tree.property.test.ts';

describe('run-tree invariants (property)', () => {
  it('hold for random trees of sub-runs', { timeout: 300_000 }, async () => {
    const cfg = config(300);
    const { numRuns, ms, stats } = await assertScenarios('run-tree invariants', FILE, scenarioArb(TREE), cfg);
    // A replay (TROUPE_PROPERTY_PATH) runs only the given case.
    if (!cfg.path) expect(numRuns).toBe(cfg.numRuns);
    console.log([`run-tree invariants: ${numRuns} cases, seed ${cfg.seed}, ${ms} ms`, ...stats.lines()].join('\n  '));
  });
});
