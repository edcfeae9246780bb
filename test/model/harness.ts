import { runImplementation } from '../../src/actors/run-implementation.js';
import { createRunMachine, type RunMachine, type RunMachineImplementation } from '../../src/machines/run.machine.js';
import { RunHandle, type Agent } from '../../src/index.js';

/** Starts a run of `agent` on `input`; the model-based executor drives and observes it. */
export type Launcher = (agent: Agent, input: string) => RunHandle;

/**
 * Runs on a given run machine through RunHandle's machine seam (its 4th constructor
 * argument), so the mutant goes through exactly the wiring Runner.stream uses: ApprovalDesk,
 * EventChannel, RunCore, root actor with its error subscriber, START.
 */
export function launchOn(machine: RunMachine): Launcher {
  return (agent, input) => new RunHandle(agent, input, {}, machine);
}

/** The real run implementation with some guards or actions replaced; everything else unchanged. */
export function mutantRunMachine(mutation: {
  guards?: Partial<RunMachineImplementation['guards']>;
  actions?: Partial<RunMachineImplementation['actions']>;
}): RunMachine {
  return createRunMachine({
    ...runImplementation,
    guards: { ...runImplementation.guards, ...mutation.guards },
    actions: { ...runImplementation.actions, ...mutation.actions },
  });
}
