import type { RunState } from './run-state.js';

/** The fields every event of this run carries. */
export function eventBase(state: RunState): { runId: string; path: readonly string[]; agent: string } {
  return { runId: state.runId, path: state.path, agent: state.agent.name };
}
