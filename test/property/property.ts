/**
 * Seeded fast-check wiring shared by the property test files: runs from
 * TROUPE_PROPERTY_RUNS, the seed from TROUPE_PROPERTY_SEED, a failure message that says
 * how to re-run the case, and one property: every planned scenario keeps every invariant.
 */
import fc from 'fast-check';
import { checkCase } from './invariants.js';
import { runCase } from './runner.js';
import { describePlan, plan, type Scenario } from './scenario.js';
import { Stats } from './stats.js';

export const DEFAULT_SEED = 20_251_201;

export interface PropertyConfig {
  readonly numRuns: number;
  readonly seed: number;
  readonly path?: string;
}

/** `TROUPE_PROPERTY_RUNS` scales every property file (its default × runs / 1000); the seed is shared. */
export function config(defaultRuns: number): PropertyConfig {
  const runs = process.env.TROUPE_PROPERTY_RUNS;
  const seed = process.env.TROUPE_PROPERTY_SEED;
  const path = process.env.TROUPE_PROPERTY_PATH;
  return {
    numRuns: runs ? Math.max(1, Math.round((defaultRuns * Number(runs)) / 1000)) : defaultRuns,
    seed: seed ? Number(seed) : DEFAULT_SEED,
    ...(path ? { path } : {}),
  };
}

/**
 * XState's development build warns (with the whole machine, tens of kB) when an event reaches
 * a stopped actor. Not an invariant, but worth knowing: such warnings are counted per case,
 * kept short, and reported with the plan of the first case that caused one.
 */
const STOPPED_ACTOR = /was sent to stopped actor/;
let currentPlan: string | undefined;
function captureStoppedActorWarnings(stats: Stats): () => void {
  const original = console.warn;
  console.warn = (...args: unknown[]) => {
    const text = args.map(String).join(' ');
    if (!STOPPED_ACTOR.test(text)) return original(...args);
    stats.add('xstate warnings', text.replace(/^Event "([^"]*)" was sent to stopped actor.*$/s, 'event "$1" sent to a stopped actor'));
    if (!stats.firstWarning) stats.firstWarning = `${text.slice(0, 200)}…\n--- in the case ---\n${currentPlan ?? '(unknown)'}`;
  };
  return () => {
    console.warn = original;
  };
}

/** One case: plan it, run it, check it; any violation fails it with the plan and the violations. */
export async function scenarioHolds(scenario: Scenario, stats?: Stats): Promise<void> {
  const p = plan(scenario);
  currentPlan = describePlan(p);
  let violations: string[];
  try {
    const record = await runCase(p);
    stats?.record(record);
    violations = checkCase(record);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n--- scenario ---\n${describePlan(p)}`, { cause: error });
  }
  if (violations.length) {
    throw new Error(`${violations.length} invariant violation(s):\n- ${[...new Set(violations)].join('\n- ')}\n--- scenario ---\n${describePlan(p)}`);
  }
}

/**
 * `fc.assert`s that every scenario of `arb` keeps every invariant. On failure the error
 * carries the seed, the shrunk counterexample and the commands that replay it.
 */
export async function assertScenarios(name: string, file: string, arb: fc.Arbitrary<Scenario>, cfg: PropertyConfig): Promise<{ numRuns: number; ms: number; stats: Stats }> {
  const started = Date.now();
  const stats = new Stats();
  let numRuns = 0;
  const report: fc.Plugin<[scenario: Scenario]> = () => ({
    onAllRunsComplete: (details) => {
      numRuns = details.numRuns;
      if (!details.failed) return;
      const rerun = `TROUPE_PROPERTY_SEED=${details.seed} TROUPE_PROPERTY_PATH=${JSON.stringify(details.counterexamplePath)} npx vitest run ${file}`;
      const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      throw new Error(
        `Property "${name}" failed (seed ${details.seed}, path ${JSON.stringify(details.counterexamplePath)}, after ${details.numRuns} runs, ${details.numShrinks} shrinks).\n` +
          `Re-run the shrunk case: ${rerun}\n` +
          `Re-run the whole property: TROUPE_PROPERTY_SEED=${details.seed} npx vitest run ${file}\n\n` +
          `Shrunk case failure:\n${cause}\n\n${fc.defaultReportMessage(details) ?? ''}`,
      );
    },
  });
  const restore = captureStoppedActorWarnings(stats);
  try {
    await fc.assert<[scenario: Scenario]>(fc.asyncProperty(arb, (scenario) => scenarioHolds(scenario, stats)), {
      numRuns: cfg.numRuns,
      seed: cfg.seed,
      ...(cfg.path ? { path: cfg.path } : {}),
      plugins: [
        report,
        // A broken runtime can make many shrink steps hang until the case guard; bound the total.
        fc.interruptAfterTimeLimit(Number(process.env.TROUPE_PROPERTY_TIME_LIMIT_MS ?? 240_000), { failOnInterrupt: true }),
      ],
    });
  } finally {
    restore();
  }
  return { numRuns, ms: Date.now() - started, stats };
}
