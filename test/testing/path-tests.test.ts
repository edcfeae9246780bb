import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, UserError, tool } from '../../src/index.js';
import { PathFailure, ScriptedModel, assertPath, describePaths, exploreAgent, type TestRunner } from '../../src/entry/testing.js';

const refund = tool({ name: 'refund', description: 'Refund.', parameters: z.object({ cents: z.number() }), needsApproval: true, execute: async () => 'refunded' });
const desk = new Agent({ name: 'Desk', model: new ScriptedModel([]), tools: [refund] });

// The helper as a user drops it into a suite: one vitest test per path.
const exploration = await exploreAgent(desk, { maxCallsPerRun: 1, cancels: false });
describePaths('the desk, explored', exploration, { describe, it });

/** A runner that records what the helper registers, so its tests can be run here. */
function recordingRunner(): TestRunner & { tests: Array<{ name: string; body: () => void | Promise<void> }>; suites: string[] } {
  const tests: Array<{ name: string; body: () => void | Promise<void> }> = [];
  const suites: string[] = [];
  return { tests, suites, describe: (name, body) => (suites.push(name), body()), it: (name, body) => tests.push({ name, body }) };
}

describe('describePaths', () => {
  it('registers one test per path, named by outcome and choices, after a test of the exploration', () => {
    const runner = recordingRunner();
    describePaths('desk', exploration, runner);
    expect(runner.suites).toEqual(['desk']);
    expect(runner.tests.map((t) => t.name)).toEqual([
      'explores 4 paths',
      '#1 completed: Desk reply 1: text',
      // "Desk reply 2" offers one option only (the run made its one call): it is not in the names.
      '#2 completed: Desk reply 1: call refund › approve refund Desk_call_1: approved › refund Desk_call_1: returns',
      '#3 completed: Desk reply 1: call refund › approve refund Desk_call_1: denied',
      '#4 completed: Desk reply 1: call refund › approve refund Desk_call_1: approved › refund Desk_call_1: throws',
    ]);
    for (const test of runner.tests) expect(test.body()).toBeUndefined();
  });

  it('fails a path that breaks an invariant with its breaches, its events and the shortest failing path', async () => {
    const strict = await exploreAgent(desk, { maxCallsPerRun: 1, cancels: false, invariants: [{ name: 'never refund', check: (p) => !p.steps.includes('Desk tool_call_completed refund ok') }] });
    expect(strict.failures.map((p) => p.index)).toEqual([2]);
    const runner = recordingRunner();
    describePaths('desk', strict, runner);
    const failure = (() => {
      try {
        runner.tests[2]!.body();
      } catch (error) {
        return error;
      }
    })();
    expect(failure).toBeInstanceOf(PathFailure);
    expect((failure as Error).message).toBe(
      [
        'path #2 broke 1 invariant:',
        '  never refund: it does not hold',
        'its choices: Desk reply 1: call refund › approve refund Desk_call_1: approved › refund Desk_call_1: returns',
        'its events:',
        '  Desk run_started',
        '  Desk turn_started 1',
        '  Desk message_completed calls refund',
        '  Desk approval_required refund',
        '  Desk tool_call_started refund',
        '  Desk tool_call_completed refund ok',
        '  Desk turn_ended 1',
        '  Desk turn_started 2',
        '  Desk message_completed text',
        '  Desk turn_ended 2',
        '  Desk run_completed',
      ].join('\n'),
    );
    // The exploration's own test names the shortest failing path.
    expect(() => runner.tests[0]!.body()).toThrow(/^path #2 broke 1 invariant:/);
    expect(() => assertPath(strict.paths[0]!, strict)).not.toThrow();
  });

  it('fails the exploration test when maxPaths cut it short, unless allowed', async () => {
    const cut = await exploreAgent(desk, { maxCallsPerRun: 1, cancels: false, maxPaths: 2 });
    const runner = recordingRunner();
    describePaths('desk', cut, runner);
    expect(() => runner.tests[0]!.body()).toThrow('the exploration stopped at maxPaths (2 paths) with paths left: raise maxPaths, lower maxCallsPerRun or maxChoices, or pass { allowTruncated: true }.');
    const allowing = recordingRunner();
    describePaths('desk', cut, allowing, { allowTruncated: true });
    expect(allowing.tests[0]!.body()).toBeUndefined();
  });

  it('needs describe and it', () => {
    expect(() => describePaths('x', exploration, {} as TestRunner)).toThrow(new UserError("describePaths needs the test runner's describe and it, e.g. describePaths(title, exploration, { describe, it })."));
  });
});
