import { OutputValidationError, RunCancelled } from '../errors.js';
import { checkOutput, repairPrompt } from '../rules/output.js';
import { checkGuardrails, hasHook, hookContext, runEndMessages } from './run-hooks.js';
import { runFinishes } from '../rules/batch.js';
import { closeOpenCalls } from './run-calls.js';
import { completedOutput, finalValue, head, withStoredExtra } from './run-record.js';
import type { RunState } from './run-state.js';

/** The final output checked against the agent's outputType; undefined when it has none or the run does not end here. */
export function outputProblem(state: RunState): string | undefined {
  const outputType = state.agent.outputType;
  if (!outputType || state.replayCompleted || !finishesAfterTurn(state)) return undefined;
  const check = checkOutput(outputType, completedOutput(state));
  return check.ok ? undefined : check.message;
}

/** Whether the run ends after this turn (pure; the `runFinished` guard): nothing may be waiting for the model. */
export function finishesAfterTurn(state: RunState): boolean {
  // shouldStopAfterTurn (a soft stop) ends the run as a terminating batch does: a waiting message still gets its turn.
  return runFinishes(state.batch.reply, state.batch.slots, state.inbox.length + state.steerQueue.length + state.followUps.length, state.batch.stopped, state.batch.stopAfterTurn === true);
}

/** Whether the turn that just ended would have ended the run but for its follow-ups (pure). */
export function onlyFollowUpsWait(state: RunState): boolean {
  return state.followUps.length > 0 && runFinishes(state.batch.reply, state.batch.slots, state.inbox.length + state.steerQueue.length, false, state.batch.stopAfterTurn === true);
}

/** The outputType repair turn: the model is told what was wrong, once. */
export function queueRepair(state: RunState): void {
  state.repairUsed = true;
  state.inbox.push({ text: repairPrompt(outputProblem(state) ?? 'the reply did not match the output schema'), source: 'repair' });
}

/** The repair turn did not help: the run fails with OutputValidationError. */
export function failWithOutputError(state: RunState): void {
  const problem = outputProblem(state) ?? 'the reply did not match the output schema';
  fail(state, new OutputValidationError(`final output invalid after one repair turn: ${problem}`, completedOutput(state)));
}

/** The ending state's work: output guardrails, then onRunEnd hooks; resolves with the messages that continue the run. */
export function runEndInput(state: RunState): { check(): Promise<string[]> } {
  return {
    check: async () => {
      // The input guardrails may still be deciding: the run cannot complete before they pass.
      if (state.inputCheck && !state.inputChecked) await state.inputCheck;
      const agent = state.hookSet;
      const ctx = hookContext(state);
      const value = finalValue(state);
      if (agent.outputGuardrails.length > 0) await checkGuardrails('output', agent.outputGuardrails, value, ctx);
      return hasHook(agent, 'onRunEnd') ? runEndMessages(agent, { output: completedOutput(state), finalOutput: value }, ctx) : [];
    },
  };
}

/** An input guardrail tripped: the run fails with it, every open call (running ones too) gets its result. */
export function failWithGuardrail(state: RunState, error: Error): void {
  fail(state, error);
  closeOpenCalls(state, `Tool error: not executed: ${error.message}`, true);
}

/** Whether the input guardrails have not decided yet (pure). */
export function inputCheckPending(state: RunState): boolean {
  return state.inputCheck !== undefined && !state.inputChecked;
}

/** onRunEnd hooks returned messages: they wait for the next model request. */
export function queueEndMessages(state: RunState, messages: readonly string[]): void {
  for (const text of messages) state.inbox.push({ text, source: 'hook' });
}

/**
 * Entering a checkpoint state, at a turn end (appending turn_end) or when a stopped run has
 * drained: the writes are queued and the run is told `checkpoint.saved` once everything
 * appended so far has landed; the state waits for that message. A failed write reaches the
 * run as `log.failed` (RunLog reports it before `settle()` rejects), which ends the run: so
 * there is no failure answer, and an answer never reaches a later checkpoint (an ended run no
 * longer listens). A message, not an actor invoked per checkpoint.
 */
export function saveCheckpoint(state: RunState): void {
  const log = state.runLog!;
  // A stopped run has drained: its results are logged; the head takes their usage before the run fails.
  if (!state.stopError) log.append(withStoredExtra(state, [{ kind: 'turn_end', turn: state.turn }]), head(state, finishesAfterTurn(state) ? 'completed' : 'running'));
  else log.append(withStoredExtra(state, []), head(state, 'running'));
  const self = state.self;
  log.settle().then(
    () => {
      if (self.getSnapshot().status === 'active') self.send({ type: 'checkpoint.saved' });
    },
    () => undefined,
  );
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
  state.outcome = {
    status: 'completed',
    runId: state.runId,
    output,
    finalOutput: finalValue(state),
    usage: { ...state.usage },
    turns: state.turn,
    agent: state.agent.name,
    transcript: state.transcript,
    finishReason: state.lastReply?.finishReason,
    lastInputTokens: state.lastReply?.inputTokens,
  };
  state.parentRef?.send({ type: 'child.ended', runId: state.runId, status: 'completed' });
  void state.runLog?.close();
  state.sink({ type: 'run_completed', runId: state.runId, path: state.path, agent: state.agent.name, output, usage: { ...state.usage }, turns: state.turn });
}

/** Entering `failed` or `cancelled`: the outcome, the stored head, the parent told, run_failed. */
export function emitFailed(state: RunState): void {
  const error = state.failure ?? state.stopError ?? new RunCancelled('run ended without a result');
  state.failure = error;
  const cancelled = error instanceof RunCancelled;
  state.outcome = { status: cancelled ? 'cancelled' : 'failed', runId: state.runId, error };
  state.abortController.abort(error);
  // Best effort: a stored cancelled run can be resumed. A refused start never opened its log,
  // and a completed stored head is never overwritten (RunLog).
  const status = cancelled ? 'cancelled' : 'failed';
  state.runLog?.append(withStoredExtra(state, []), head(state, status, error));
  void state.runLog?.close();
  state.parentRef?.send({ type: 'child.ended', runId: state.runId, status });
  state.sink({ type: 'run_failed', runId: state.runId, path: state.path, agent: state.agent.name, error, usage: { ...state.usage }, turns: state.turn });
}

/** A write to the checkpoint store (or a lease renewal) failed: the run fails now, running calls are aborted and closed. */
export function failWithStoreError(state: RunState, error: Error): void {
  fail(state, error);
  closeOpenCalls(state, `Tool error: not executed: the run's checkpoint store failed: ${error.message}`, true);
}
