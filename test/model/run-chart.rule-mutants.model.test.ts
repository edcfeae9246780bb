/**
 * Mutants of the RULE functions (src/rules/*.ts), not of the chart's glue: each replaces one
 * export with a broken version (vi.doMock + vi.resetModules + a fresh import of the driver,
 * so the whole runtime is loaded against the broken rule) and runs the `core` paths of the
 * run-chart model (every chart transition, every stimulus in every chart state). The model
 * never calls src/rules, so a broken rule must show up as a path failing — the suite can fail.
 *
 * ESM note: a module's own calls to its functions do not go through its exports, so a mock
 * of `batchTerminates` alone would not reach `runFinishes`, which calls it inside batch.ts;
 * that mutant also routes `runFinishes` through the broken rule. `mustRunAlone` is likewise
 * called inside `callVerdict`: its mutant reaches the chart's currentCallRunsAlone guard only.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as ApprovalRules from '../../src/rules/approval.js';
import type * as BatchRules from '../../src/rules/batch.js';
import type * as BudgetRules from '../../src/rules/budget.js';
import type * as LimitRules from '../../src/rules/limits.js';
import type * as PreflightRules from '../../src/rules/preflight.js';
import { generatePaths } from './chart-paths.js';

const core = generatePaths({ edges: false }).paths;

const RULES = {
  approval: '../../src/rules/approval.js',
  batch: '../../src/rules/batch.js',
  budget: '../../src/rules/budget.js',
  limits: '../../src/rules/limits.js',
  preflight: '../../src/rules/preflight.js',
} as const;

type Outcome = { readonly path: string; readonly failure: string | undefined; readonly message: string | undefined };

/** Runs every core path with the runtime freshly loaded (after `mock`, if any). */
async function runCore(mock?: () => void): Promise<Outcome[]> {
  vi.resetModules();
  mock?.();
  const { executeChartPath } = await import('./chart-driver.js');
  const out: Outcome[] = [];
  for (const path of core) {
    try {
      await executeChartPath(path);
      out.push({ path: path.name, failure: undefined, message: undefined });
    } catch (error) {
      const e = error as Error;
      out.push({ path: path.name, failure: `${e.name}: ${e.message.split('\n')[0]}`, message: e.message });
    }
  }
  return out;
}

const failing = (outcomes: readonly Outcome[]): Record<string, string> => Object.fromEntries(outcomes.flatMap((o) => (o.failure ? [[o.path, o.failure]] : [])));

interface Mutant {
  readonly rule: keyof typeof RULES;
  /** Builds the broken exports from the original module. */
  readonly mutate: (original: any) => Record<string, unknown>;
  /** Path prefixes (up to the failing step) that must fail under the mutant, with the first line of the failure; other core paths may fail too. */
  readonly killedBy: Record<string, string>;
  /** More about the first killer's failure: its whole message must satisfy this. */
  readonly detail?: (message: string) => unknown;
}

/** How often `line` occurs in the observed and in the expected block of a mismatch message. */
function observedVsExpected(message: string, line: string): [number, number] {
  const [, observed = '', expected = ''] = message.split(/\n\s+(?:observed|expected)/);
  const count = (block: string): number => block.split('\n').filter((l) => l.trim() === line).length;
  return [count(observed), count(expected.split('\n  path:')[0]!)];
}

const MUTANTS: Record<string, Mutant> = {
  'ancestorOverBudget: the ancestor walk stops at the parent': {
    rule: 'budget',
    mutate: (o: typeof BudgetRules) => ({ ancestorOverBudget: (ancestors: BudgetRules.AncestorBudget[], now: number) => o.ancestorOverBudget(ancestors.slice(0, 1), now) }),
    killedBy: { 'launch(nested) → reply(nested) → settle(0)': 'ModelMismatch: step 3 (settle(0)): root chart transitions' },
    // The leaf, checking only its parent (no budget), runs both calls and asks its model
    // again: the root hears one spend more than the spec allows.
    detail: (message) => expect(observedVsExpected(message, 'run child.spend#0 -> (self)')).toEqual([6, 5]),
  },
  'toolCallsOverBudget: off by one (count >= max)': {
    rule: 'budget',
    mutate: (o: typeof BudgetRules) => ({ toolCallsOverBudget: (budget: Parameters<typeof o.toolCallsOverBudget>[0], count: number) => o.toolCallsOverBudget(budget, count + 1) }),
    killedBy: { 'launch(durable) → loadOk → reply(single)': 'ModelMismatch: step 3 (reply(single)): root chart transitions' },
  },
  'mustRunAlone: always false': {
    rule: 'preflight',
    mutate: () => ({ mustRunAlone: () => false }),
    killedBy: { 'launch(basic) → reply(gatedAlone) → settle(0) → approve': 'ModelMismatch: step 4 (approve): root chart transitions' },
  },
  'callVerdict: skips the handoff dedup': {
    rule: 'preflight',
    mutate: (o: typeof PreflightRules) => ({ callVerdict: (input: PreflightRules.VerdictInput) => o.callVerdict({ ...input, claimedHandoff: undefined }) }),
    killedBy: { 'launch(durableHandoff) → loadOk → reply(handoffs) → settle(0)': 'ModelMismatch: step 4 (settle(0)): root chart transitions' },
  },
  'batchTerminates: always false': {
    rule: 'batch',
    mutate: (o: typeof BatchRules) => ({
      batchTerminates: () => false,
      // runFinishes calls batchTerminates inside batch.ts: with it false, only "no calls" finishes.
      runFinishes: (reply: Parameters<typeof o.runFinishes>[0], _calls: unknown, waiting: number) => o.runFinishes(reply, [], waiting),
    }),
    killedBy: { 'launch(basic) → reply(terminate) → settle(0)': 'ModelMismatch: step 3 (settle(0)): root chart transitions' },
  },
  'runFinishes: ignores waiting messages': {
    rule: 'batch',
    mutate: (o: typeof BatchRules) => ({ runFinishes: (reply: Parameters<typeof o.runFinishes>[0], calls: Parameters<typeof o.runFinishes>[1]) => o.runFinishes(reply, calls, 0) }),
    killedBy: { 'launch(basic) → reply(terminatePost) → settle(0) → settle(1)': 'ModelMismatch: step 4 (settle(1)): root chart transitions' },
  },
  'runFinishes: ignores the soft stop (shouldStopAfterTurn)': {
    rule: 'batch',
    mutate: (o: typeof BatchRules) => ({
      runFinishes: (reply: Parameters<typeof o.runFinishes>[0], calls: Parameters<typeof o.runFinishes>[1], waiting: number, stopped?: boolean) => o.runFinishes(reply, calls, waiting, stopped, false),
    }),
    killedBy: { 'launch(softStop) → reply(single) → settle(0) → stopAfterTurn': 'ModelMismatch: step 4 (stopAfterTurn): root chart transitions' },
  },
  "approvalNeeded: only `true` needs approval (a predicate's 'yes' runs unasked)": {
    rule: 'approval',
    mutate: () => ({ approvalNeeded: (answer: unknown) => answer === true }),
    killedBy: { 'launch(basic) → reply(gated)': 'ModelMismatch: step 2 (reply(gated)): root chart transitions' },
  },
  'handlerVerdict: any truthy answer allows': {
    rule: 'approval',
    mutate: (o: typeof ApprovalRules) => ({ handlerVerdict: (answer: unknown) => (answer ? 'allow' : o.handlerVerdict(answer)) }),
    killedBy: { 'launch(basic) → reply(gated)': 'ModelMismatch: step 2 (reply(gated)): root chart transitions' },
  },
  'spendViolation: never sees spend folded from sub-runs': {
    rule: 'limits',
    mutate: () => ({ spendViolation: () => undefined }),
    killedBy: { 'launch(nested) → reply(nested) → settle(0)': 'ModelMismatch: step 3 (settle(0)): root chart transitions' },
  },
  'turnStartViolation: allows one turn more than maxTurns': {
    rule: 'limits',
    mutate: (o: typeof LimitRules) => ({ turnStartViolation: (run: LimitRules.LimitsView, now: number) => o.turnStartViolation({ ...run, maxTurns: run.maxTurns + 1 }, now) }),
    killedBy: { 'launch(oneTurn) → reply(single) → settle(0)': 'ModelMismatch: step 3 (settle(0)): root chart transitions' },
  },
};

describe('rule mutants make the run-chart model fail', () => {
  let mocked: string | undefined;
  afterEach(() => {
    if (mocked) vi.doUnmock(mocked);
    mocked = undefined;
    vi.resetModules();
  });

  it('control: the runtime reloaded the same way, with the real rules, passes every core path', async () => {
    // The same reload, through an identity mock: the machinery alone breaks nothing.
    const outcomes = await runCore(() => {
      mocked = RULES.budget;
      vi.doMock(RULES.budget, async (importOriginal) => importOriginal());
    });
    expect(outcomes.length).toBe(core.length);
    expect(failing(outcomes)).toEqual({});
  });

  it.each(Object.entries(MUTANTS))('%s', async (_name, mutant) => {
    const outcomes = await runCore(() => {
      mocked = RULES[mutant.rule];
      vi.doMock(RULES[mutant.rule], async (importOriginal) => {
        const original = await importOriginal<Record<string, unknown>>();
        return { ...original, ...mutant.mutate(original) };
      });
    });
    const failed = failing(outcomes);
    for (const [prefix, first] of Object.entries(mutant.killedBy)) expect(killed(failed, prefix), prefix).toContain(first);
    if (mutant.detail) {
      const prefix = Object.keys(mutant.killedBy)[0]!;
      mutant.detail(outcomes.find((o) => o.message && (o.path === prefix || o.path.startsWith(`${prefix} → `)))!.message!);
    }
    // Every failure is the model catching it, never a crash of the harness.
    for (const failure of Object.values(failed)) expect(failure).toMatch(/^(ModelMismatch|InvariantViolation): /);
  });
});

/** First lines of the failures of the paths that start with `prefix` (a prefix that includes the failing step). */
function killed(failed: Record<string, string>, prefix: string): string[] {
  return Object.entries(failed).flatMap(([name, first]) => (name === prefix || name.startsWith(`${prefix} → `) ? [first] : []));
}
