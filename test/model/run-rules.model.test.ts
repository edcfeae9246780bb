import { describe, expect, it } from 'vitest';
import { enqueueActions } from 'xstate';
import { admitCalls } from '../../src/runtime/run-calls.js';
import type { AdjacencyValue } from 'xstate/graph';
import { Runner, getRunMachine } from '../../src/index.js';
import { dispatchApproved } from '../../src/runtime/run-approvals.js';
import type { RunMachineContext } from '../../src/machines/run.machine.js';
import { InvariantViolation, executePath, type ApprovalMode } from './execute-path.js';
import { launchOn, mutantRunMachine, type Launcher } from './harness.js';
import { generatePaths, pathEvents, serializeTurn, type CallSpec, type TurnEvent, type TurnPath, type TurnSnapshot } from './turn-model.js';

const par = (id: string): CallSpec => ({ id, gated: false, barrier: false });
const gated = (id: string): CallSpec => ({ id, gated: true, barrier: false });
const barrier = (id: string): CallSpec => ({ id, gated: false, barrier: true });
const gatedBarrier = (id: string): CallSpec => ({ id, gated: true, barrier: true });
const handoffCall = (id: string): CallSpec => ({ id, gated: false, barrier: true, handoff: true });

/** The batch from the issue: parallel A, gated parallel B, barrier C, parallel D. */
const ISSUE_BATCH = [par('A'), gated('B'), barrier('C'), par('D')];

const BATCHES: ReadonlyArray<{ name: string; calls: CallSpec[]; states: number; transitions: number; paths: number }> = [
  { name: 'A, B(approval), C(barrier), D', calls: ISSUE_BATCH, states: 13, transitions: 15, paths: 5 },
  // A gated barrier approved while a call is in flight; a gated call with two calls in flight; draining three calls.
  { name: 'Q, P(approval, barrier), R, S(approval), T', calls: [par('Q'), gatedBarrier('P'), par('R'), gated('S'), par('T')], states: 47, transitions: 85, paths: 43 },
  // A barrier first (nothing in flight), consecutive barriers, a gated barrier, a barrier last.
  { name: 'X(barrier), Y(approval, barrier), Z, W(barrier)', calls: [barrier('X'), gatedBarrier('Y'), par('Z'), barrier('W')], states: 10, transitions: 9, paths: 2 },
  // A handoff tool declared parallel: the handoff rule alone must make it a barrier.
  { name: 'A, H(handoff), B', calls: [par('A'), handoffCall('H'), par('B')], states: 5, transitions: 4, paths: 1 },
];

const MODES: ApprovalMode[] = ['parked', 'ask'];
const realRunner: Launcher = (agent, input) => Runner.stream(agent, input);
const title = (path: TurnPath): string => pathEvents(path).join(' → ');

for (const batch of BATCHES) {
  const generated = generatePaths(batch.calls);

  describe(`model: ${batch.name}`, () => {
    it('has a finite graph, and the executed paths cover every state and every transition', () => {
      expect({ states: generated.states, transitions: generated.transitions, paths: generated.transitionCover.length }).toEqual({
        states: batch.states,
        transitions: batch.transitions,
        paths: batch.paths,
      });
      const adjacency = generated.model.getAdjacencyMap();
      const visitedStates = new Set<string>();
      const visitedEdges = new Set<string>();
      for (const path of generated.transitionCover) {
        path.steps.forEach((step, i) => {
          visitedStates.add(serializeTurn(step.state));
          if (i > 0) visitedEdges.add(`${serializeTurn(path.steps[i - 1]!.state)} --${step.event.type}--> ${serializeTurn(step.state)}`);
        });
        // Every executed path is a complete run.
        expect(path.state.status).toBe('done');
      }
      const allEdges = (Object.entries(adjacency) as Array<[string, AdjacencyValue<TurnSnapshot, TurnEvent>]>).flatMap(([from, v]) =>
        Object.values(v.transitions).map((t) => `${from} --${t.event.type}--> ${serializeTurn(t.state)}`),
      );
      expect([...visitedStates].sort()).toEqual(Object.keys(adjacency).sort());
      expect([...visitedEdges].sort()).toEqual(allEdges.sort());
      // xstate/graph's own shortest paths are all prefixes of executed paths.
      const executed = generated.transitionCover.map((p) => pathEvents(p).join(' '));
      for (const path of generated.stateCover) {
        const prefix = pathEvents(path).join(' ');
        expect(executed.some((e) => e === prefix || e.startsWith(`${prefix} `))).toBe(true);
      }
    });

    for (const mode of MODES) {
      describe(`approvals decided by a ${mode} consumer`, () => {
        it.each(generated.transitionCover.map((path) => [title(path), path] as const))('%s', async (_title, path) => {
          const run = await executePath(generated.model, batch.calls, path, realRunner, mode);
          expect(run.violations).toEqual([]);
          expect(run.events.map((e) => e.type).filter((t) => t === 'tool_call_completed')).toHaveLength(batch.calls.length);
        });
      });
    }
  });
}

describe('mutants: a run machine with one broken rule fails the suite', () => {
  const generated = generatePaths(ISSUE_BATCH);
  const paths = generated.transitionCover;

  /** Runs every path of the issue batch on `launch`; collects the error of each path (or undefined). */
  async function outcomes(launch: Launcher, mode: ApprovalMode) {
    const out: Array<{ path: string; error: Error | undefined }> = [];
    for (const path of paths) {
      let error: Error | undefined;
      try {
        await executePath(generated.model, ISSUE_BATCH, path, launch, mode);
      } catch (caught) {
        error = caught as Error;
      }
      out.push({ path: title(path), error });
    }
    return out;
  }

  const firstViolations = (results: Awaited<ReturnType<typeof outcomes>>) =>
    Object.fromEntries(
      results.map((r) => [r.path, r.error instanceof InvariantViolation ? { state: r.error.state, first: r.error.violations[0] } : r.error?.name]),
    );

  it.each(MODES)('control: RunHandle with the real run machine passed explicitly passes every path (%s consumer)', async (mode) => {
    const results = await outcomes(launchOn(getRunMachine()), mode);
    expect(results.filter((r) => r.error).map((r) => `${r.path}: ${r.error!.message}`)).toEqual([]);
  });

  it.each(MODES)('nothingInFlight always true (the barrier guard) breaks invariant (2) on every path (%s consumer)', async (mode) => {
    const results = await outcomes(launchOn(mutantRunMachine({ guards: { nothingInFlight: () => true } })), mode);
    expect(results.map((r) => r.error?.name)).toEqual(paths.map(() => 'InvariantViolation'));
    // Where each path first fails: the step that lets the barrier C (or D after it) start.
    expect(firstViolations(results)).toEqual({
      'START → APPROVE_B → SETTLE_A → SETTLE_B → SETTLE_C → SETTLE_D': {
        state: '{"barrier":"waitingForInFlight"} [A:running B:running C:pending D:pending]',
        first: '(2) barrier call C started while A,B running',
      },
      'START → SETTLE_A → APPROVE_B → SETTLE_B → SETTLE_C → SETTLE_D': {
        state: '{"barrier":"waitingForInFlight"} [A:done B:running C:pending D:pending]',
        first: '(2) barrier call C started while B running',
      },
      'START → DENY_B → SETTLE_A → SETTLE_C → SETTLE_D': {
        state: '{"barrier":"waitingForInFlight"} [A:running B:denied C:pending D:pending]',
        first: '(2) barrier call C started while A running',
      },
      // Nothing is in flight when C starts, so the broken guard lets D start next to it.
      'START → SETTLE_A → DENY_B → SETTLE_C → SETTLE_D': {
        state: '{"barrier":"runningAlone"} [A:done B:denied C:running D:pending]',
        first: '(2) call D started while barrier call C running',
      },
      'START → APPROVE_B → SETTLE_B → SETTLE_A → SETTLE_C → SETTLE_D': {
        state: '{"barrier":"waitingForInFlight"} [A:running B:running C:pending D:pending]',
        first: '(2) barrier call C started while A,B running',
      },
    });
    // The overlap is visible on the event stream too, not only in the tool bodies.
    const all = results.flatMap((r) => (r.error as InvariantViolation).violations);
    expect(all).toContain('(2) barrier call C started while A,B in flight');
  });

  it.each(MODES)('applyApproval ignoring the decision breaks invariant (1) on the DENY paths only (%s consumer)', async (mode) => {
    // The denial's action runs the call instead of rejecting it.
    const alwaysApprove = mutantRunMachine({ actions: { rejectDenied: ({ context }: { context: RunMachineContext }) => dispatchApproved(context.run) } });
    const results = await outcomes(launchOn(alwaysApprove), mode);
    // Whether the checker sees the body start before or after it records the denial depends on
    // the consumer mode; both are invariant (1).
    const deniedButRan = expect.stringMatching(/^\(1\) gated call B (started without approval|ran after it was denied)$/);
    expect(firstViolations(results)).toEqual({
      'START → APPROVE_B → SETTLE_A → SETTLE_B → SETTLE_C → SETTLE_D': undefined,
      'START → SETTLE_A → APPROVE_B → SETTLE_B → SETTLE_C → SETTLE_D': undefined,
      'START → DENY_B → SETTLE_A → SETTLE_C → SETTLE_D': {
        state: '{"barrier":"waitingForInFlight"} [A:running B:denied C:pending D:pending]',
        first: deniedButRan,
      },
      // The model lets C run alone here; the mutant ran B instead.
      'START → SETTLE_A → DENY_B → SETTLE_C → SETTLE_D': {
        state: '{"barrier":"runningAlone"} [A:done B:denied C:running D:pending]',
        first: deniedButRan,
      },
      'START → APPROVE_B → SETTLE_B → SETTLE_A → SETTLE_C → SETTLE_D': undefined,
    });
  });

  it('preflight.alone treated as done (skips the barrier) fails every path: C never runs', async () => {
    const results = await outcomes(launchOn(mutantRunMachine({ actions: { admitCalls: enqueueActions(({ context, enqueue }) => { const verdict = admitCalls((context as RunMachineContext).run); enqueue.raise({ type: verdict === 'preflight.alone' ? 'preflight.done' : verdict }); }) } })), 'ask');
    // The run drains past C and D; the afterTools safety net gives them synthetic results,
    // so invariant (3) holds, but the comparison with the model sees C never start.
    expect(results.map((r) => r.error?.name)).toEqual(paths.map(() => 'ModelMismatch'));
    expect(results.map((r) => r.error!.message.split('\n')[0]!.replace(/ in abstract state.*/, ''))).toEqual(paths.map(() => 'executing bodies [], model says running [C]'));
  });

  // Guards whose breakage stalls the run without breaking an invariant outright:
  // the comparison with the abstract model catches them on every path.
  it.each([
        ['nothingInFlight always false (the barrier never opens)', { nothingInFlight: () => false }],
  ] as const)('%s fails every path', async (_name, guards) => {
    const results = await outcomes(launchOn(mutantRunMachine({ guards })), 'ask');
    expect(results.map((r) => r.error?.name)).toEqual(paths.map(() => 'ModelMismatch'));
  });
});
