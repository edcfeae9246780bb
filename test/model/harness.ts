import { runMachine, type RunMachine } from '../../src/machines/run.machine.js';
import { RunHandle, type Agent } from '../../src/index.js';

/** Starts a run of `agent` on `input`; the model-based executor drives and observes it. */
export type Launcher = (agent: Agent, input: string) => RunHandle;

/**
 * Runs on a given run machine through RunHandle's machine seam (its 4th constructor
 * argument), so the mutant goes through exactly the wiring Runner.stream uses: approval
 * router, EventChannel, run state, root actor with its error subscriber, START.
 */
export function launchOn(machine: RunMachine): Launcher {
  return (agent, input) => new RunHandle(agent, input, {}, machine);
}

type Provided = Parameters<RunMachine['provide']>[0];

/** The real run machine with some guards or actions replaced (XState's `.provide()`); everything else unchanged. */
export function mutantRunMachine(mutation: { guards?: NonNullable<Provided['guards']>; actions?: NonNullable<Provided['actions']> }): RunMachine {
  return runMachine.provide(mutation) as RunMachine;
}
