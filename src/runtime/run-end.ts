import type { CheckpointInput } from '../actors/checkpoint.js';
import { RunCancelled } from '../errors.js';
import { finalOutput, runFinishes } from '../rules/batch.js';
import type { CheckpointEntry, CheckpointHead, RunStatus } from '../store/checkpoint-store.js';
import { closeOpenCalls } from './run-calls.js';
import type { RunState } from './run-state.js';

/** Appends one entry to the run's log (when it has a checkpoint store). */
export function log(state: RunState, entry: CheckpointEntry): void {
  state.runLog?.append([entry], head(state, 'running'));
}

function head(state: RunState, status: RunStatus, error?: Error): CheckpointHead {
  const output = status === 'completed' ? completedOutput(state) : '';
  return {
    agent: state.agent.name,
    turn: state.turn,
    usage: { ...state.usage },
    status,
    ...(output ? { output } : {}),
    ...(error ? { error: { name: error.name, message: error.message } } : {}),
  };
}

/** The run's final output: a replayed completed run's stored one, else this turn's final reply or terminating results. */
export function completedOutput(state: RunState): string {
  return state.replayCompleted ? state.storedOutput : finalOutput(state.batch.reply, state.batch.slots);
}

/** Whether the run ends after this turn (pure; the `runFinished` guard). */
export function finishesAfterTurn(state: RunState): boolean {
  return runFinishes(state.batch.reply, state.batch.slots, state.inbox.length);
}

/** The checkpoint state: at a turn end (appending turn_end) or when a stopped run has drained; waits for every write. */
export function checkpointInput(state: RunState): CheckpointInput {
  return {
    flush: () => {
      if (!state.stopError) state.runLog?.append([{ kind: 'turn_end', turn: state.turn }], head(state, finishesAfterTurn(state) ? 'completed' : 'running'));
      return state.runLog?.settle() ?? Promise.resolve();
    },
  };
}

export function fail(state: RunState, error: Error): void {
  state.failure ??= error;
}

/** Entering `cancelled`: the run's signal aborts, every open call (running ones too) gets its result. */
export function cancel(state: RunState): void {
  const error = (state.cancelError ??= new RunCancelled());
  state.abortController.abort(error);
  const reason = error instanceof RunCancelled ? error.reason : error.message;
  closeOpenCalls(state, `Tool error: run cancelled: ${reason}`, true);
  state.failure = error;
}

export function emitCompleted(state: RunState): void {
  const output = completedOutput(state);
  state.outcome = { status: 'completed', runId: state.runId, output, usage: { ...state.usage }, turns: state.turn, agent: state.agent.name, transcript: state.transcript };
  state.parentRef?.send({ type: 'child.ended', runId: state.runId });
  state.sink({ type: 'run_completed', runId: state.runId, path: state.path, agent: state.agent.name, output, usage: { ...state.usage }, turns: state.turn });
}

export function emitFailed(state: RunState): void {
  const error = state.failure ?? state.stopError ?? new RunCancelled('run ended without a result');
  state.failure = error;
  state.outcome = { status: 'failed', runId: state.runId, error };
  state.abortController.abort(error);
  // Best effort: a cancelled run can be resumed ("interrupted"), any other failure is "failed".
  state.runLog?.append([], head(state, error instanceof RunCancelled ? 'interrupted' : 'failed', error));
  state.parentRef?.send({ type: 'child.ended', runId: state.runId });
  state.sink({ type: 'run_failed', runId: state.runId, path: state.path, agent: state.agent.name, error, usage: { ...state.usage }, turns: state.turn });
}
