import { runImplementation } from '../actors/run-implementation.js';
import { createRunMachine, type RunMachine } from '../machines/run.machine.js';

let runMachine: RunMachine | undefined;

/** The run statechart bound to its implementation; built once per process. */
export function getRunMachine(): RunMachine {
  return (runMachine ??= createRunMachine(runImplementation));
}
