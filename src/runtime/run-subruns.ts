import type { AnyActorRef } from 'xstate';
import type { StoredRunStatus } from '../store/checkpoint-store.js';
import { log } from './run-record.js';
import type { CallSlot, RunState } from './run-state.js';

/** The call of this run that a sub-run id `<runId>/<turn>.<index>` belongs to, if it is of the current turn. */
function callOf(state: RunState, subRunId: string): CallSlot | undefined {
  const prefix = `${state.runId}/`;
  return subRunId.startsWith(prefix) ? state.batch.byKey.get(subRunId.slice(prefix.length)) : undefined;
}

/** `child.started`: a sub-run announced itself; it is told about spend from now on, and its start is logged. */
export function trackSubRun(state: RunState, runId: string, ref: AnyActorRef): void {
  (state.subRuns ??= new Map()).set(runId, ref);
  const slot = callOf(state, runId);
  if (slot) log(state, { kind: 'subrun_start', turn: state.turn, index: slot.index, callId: slot.call.id, runId });
}

/** `child.ended`: the sub-run ended with `status` (its own log says how); its end is logged. */
export function untrackSubRun(state: RunState, runId: string, status: StoredRunStatus): void {
  state.subRuns?.delete(runId);
  const slot = callOf(state, runId);
  if (slot) log(state, { kind: 'subrun_end', turn: state.turn, index: slot.index, callId: slot.call.id, runId, status });
}
