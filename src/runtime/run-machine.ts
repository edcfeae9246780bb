import { runMachine, type RunMachine } from '../machines/run.machine.js';

/** The run statechart with its implementations bound (one per process). */
export function getRunMachine(): RunMachine {
  return runMachine;
}
