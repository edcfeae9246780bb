/**
 * Mutants of the chart's glue: one named guard or action of the real run machine replaced
 * with `.provide()` (the seam docs/architecture.md, "Testing seams", names), run through RunHandle's machine
 * argument on the `core` paths of the run-chart model. Complements the rule mutants
 * (run-chart.rule-mutants.model.test.ts): there the pure rule is broken, here the wiring.
 */
import { describe, expect, it } from 'vitest';
import { runMachine, type RunMachine } from '../../src/machines/run.machine.js';
import { executeChartPath } from './chart-driver.js';
import { generatePaths } from './chart-paths.js';

const core = generatePaths({ edges: false }).paths;
type Provided = Parameters<RunMachine['provide']>[0];

async function failures(machine: RunMachine): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const path of core) {
    try {
      await executeChartPath(path, machine);
    } catch (error) {
      out[path.name] = `${(error as Error).name}: ${(error as Error).message.split('\n')[0]}`;
    }
  }
  return out;
}

const MUTANTS: ReadonlyArray<readonly [string, Provided, Record<string, string>]> = [
  ['turnUnsaved always false (turns end without waiting for their writes)', { guards: { turnUnsaved: () => false } }, {
    'launch(durable) → loadOk → reply(single) → settle(0)': 'ModelMismatch: step 4 (settle(0)): root chart transitions',
  }],
  ['stopRequested always false (a tool\'s BudgetExceeded does not stop the run)', { guards: { stopRequested: () => false } }, {
    'launch(basic) → reply(budgetTool) → settle(0)': 'ModelMismatch: step 3 (settle(0)): root chart transitions',
  }],
  ['handoffPending always false (the handoff never happens)', { guards: { handoffPending: () => false } }, {
    'launch(basic) → reply(badHandoff) → settle(0)': 'ModelMismatch: step 3 (settle(0)): root chart transitions',
    'launch(durableHandoff) → loadOk → reply(handoffs) → settle(0) → storeOk': 'ModelMismatch: step 5 (storeOk): root chart transitions',
  }],
  ['resultsCancelRun always false (a tool\'s RunCancelled is just an error result)', { guards: { resultsCancelRun: () => false } }, {
    'launch(basic) → reply(cancelTool) → settle(0)': 'ModelMismatch: step 3 (settle(0)): root chart transitions',
  }],
  ['lastResultsIn always true (draining ends while calls still run)', { guards: { lastResultsIn: () => true } }, {
    'launch(basic) → reply(terminatePost) → settle(0)': 'ModelMismatch: step 3 (settle(0)): root chart transitions',
  }],
  ['noSession always true (a completed run never joins its session)', { guards: { noSession: () => true } }, {
    'launch(session) → loadOk → reply(text)': 'ModelMismatch: step 3 (reply(text)): root chart transitions',
  }],
  ['resumeInTurn always false (a stored open turn is asked again)', { guards: { resumeInTurn: () => false } }, {
    'launch(resumeOpenTurn) → loadOk': 'ModelMismatch: step 2 (loadOk): root chart transitions',
  }],
  ['stopAfterTurnUnasked always false (the shouldStopAfterTurn hook is never asked)', { guards: { stopAfterTurnUnasked: () => false } }, {
    'launch(softStop) → reply(single) → settle(0)': 'ModelMismatch: step 3 (settle(0)): root chart transitions',
  }],
  ['pluginsUnset always false (an agent\'s plugins are never set up)', { guards: { pluginsUnset: () => false } }, {
    'launch(plugged)': 'ModelMismatch: step 1 (launch(plugged)): root chart transitions',
  }],
  ['closeForStop does nothing (calls that never ran get no result)', { actions: { closeForStop: () => undefined } }, {
    'launch(durable) → loadOk → reply(triple)': 'ModelMismatch: step 3 (reply(triple)): root events',
  }],
];

describe('glue mutants of the real run machine make the run-chart model fail', () => {
  it('control: the real machine passed explicitly passes every core path', async () => {
    expect(await failures(runMachine.provide({}) as RunMachine)).toEqual({});
  });

  it.each(MUTANTS)('%s', async (_name, provided, killedBy) => {
    const failed = await failures(runMachine.provide(provided) as RunMachine);
    for (const [prefix, first] of Object.entries(killedBy)) expect(killed(failed, prefix), prefix).toContain(first);
    for (const failure of Object.values(failed)) expect(failure).toMatch(/^(ModelMismatch|InvariantViolation): /);
  });
});

/** First lines of the failures of the paths that start with `prefix` (a prefix that includes the failing step). */
function killed(failed: Record<string, string>, prefix: string): string[] {
  return Object.entries(failed).flatMap(([name, first]) => (name === prefix || name.startsWith(`${prefix} → `) ? [first] : []));
}
