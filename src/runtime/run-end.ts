import type { CheckpointInput } from '../actors/checkpoint.js';
import { OutputValidationError, RunCancelled } from '../errors.js';
import { checkOutput, repairPrompt } from '../rules/output.js';
import { checkGuardrails, hasHook, hookContext, runEndMessages } from './run-hooks.js';
import { finalOutput, runFinishes, shouldPark } from '../rules/batch.js';
import type { CheckpointEntry, CheckpointHead, RunStatus } from '../store/checkpoint-store.js';
import { closeOpenCalls } from './run-calls.js';
import type { RunState } from './run-state.js';
import type { SuspendedApproval } from '../types.js';

/** Appends one entry to the run's log (when it has a checkpoint store). */
export function log(state: RunState, entry: CheckpointEntry): void {
  state.runLog?.append([entry], head(state, 'running'));
}

function head(state: RunState, status: RunStatus, error?: Error): CheckpointHead {
  const output = status === 'completed' ? completedOutput(state) : '';
  // Written on every append: optional fields are set, not spread (spreading into a literal is a slow path on Node 20).
  const written: { -readonly [K in keyof CheckpointHead]: CheckpointHead[K] } = { agent: state.agent.name, turn: state.turn, usage: { ...state.usage }, status };
  if (output) written.output = output;
  if (error) written.error = { name: error.name, message: error.message };
  return written;
}

/** The run's final output: a replayed completed run's stored one, else this turn's final reply or terminating results. */
export function completedOutput(state: RunState): string {
  return state.replayCompleted ? state.storedOutput : finalOutput(state.batch.reply, state.batch.slots, state.batch.stopped);
}

/** The run's final output value: the outputType's parsed value when the agent has one, else the output text. */
export function finalValue(state: RunState): unknown {
  const text = completedOutput(state);
  const outputType = state.agent.outputType;
  if (!outputType) return text;
  const check = checkOutput(outputType, text);
  return check.ok ? check.value : undefined;
}

/** The final output checked against the agent's outputType; undefined when it has none or the run does not end here. */
export function outputProblem(state: RunState): string | undefined {
  const outputType = state.agent.outputType;
  if (!outputType || state.replayCompleted || !finishesAfterTurn(state)) return undefined;
  const check = checkOutput(outputType, completedOutput(state));
  return check.ok ? undefined : check.message;
}

/** Whether the run ends after this turn (pure; the `runFinished` guard): nothing may be waiting for the model. */
export function finishesAfterTurn(state: RunState): boolean {
  return runFinishes(state.batch.reply, state.batch.slots, state.inbox.length + state.steerQueue.length + state.followUps.length, state.batch.stopped);
}

/** Whether the turn that just ended would have ended the run but for its follow-ups (pure). */
export function onlyFollowUpsWait(state: RunState): boolean {
  return state.followUps.length > 0 && runFinishes(state.batch.reply, state.batch.slots, state.inbox.length + state.steerQueue.length);
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
      const agent = state.agent;
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

/** The answer to a checkpoint state's writes (saveCheckpoint), sent to the run itself. */
export type CheckpointEvent = { readonly type: 'checkpoint.saved' } | { readonly type: 'checkpoint.failed'; readonly error: unknown };

/**
 * Entering a checkpoint state, at a turn end (appending turn_end) or when a stopped run has
 * drained: the writes are queued and the run is told `checkpoint.saved` or `checkpoint.failed`
 * once everything appended so far has landed; the state waits for that message. A message,
 * not an actor invoked per checkpoint: every way out of a checkpoint state other than its
 * answer ends the run, so an answer never reaches a later checkpoint, and an ended run no
 * longer listens.
 */
export function saveCheckpoint(state: RunState): void {
  // A stopped run has drained: its results are logged; the head takes their usage before the run fails.
  if (!state.stopError) state.runLog?.append([{ kind: 'turn_end', turn: state.turn }], head(state, finishesAfterTurn(state) ? 'completed' : 'running'));
  else state.runLog?.append([], head(state, 'running'));
  const self = state.self;
  const tell = (event: CheckpointEvent): void => {
    if (self.getSnapshot().status === 'active') self.send(event);
  };
  (state.runLog?.settle() ?? Promise.resolve()).then(
    () => tell({ type: 'checkpoint.saved' }),
    (error: unknown) => tell({ type: 'checkpoint.failed', error }),
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

export function emitFailed(state: RunState): void {
  const error = state.failure ?? state.stopError ?? new RunCancelled('run ended without a result');
  state.failure = error;
  state.outcome = { status: 'failed', runId: state.runId, error };
  state.abortController.abort(error);
  // Best effort: a cancelled run can be resumed ("interrupted"), any other failure is "failed".
  // A refused start never opened its log, and a completed stored head is never overwritten (RunLog).
  const status = error instanceof RunCancelled ? 'interrupted' : 'failed';
  state.runLog?.append([], head(state, status, error));
  void state.runLog?.close();
  state.parentRef?.send({ type: 'child.ended', runId: state.runId, status });
  state.sink({ type: 'run_failed', runId: state.runId, path: state.path, agent: state.agent.name, error, usage: { ...state.usage }, turns: state.turn });
}

/**
 * Whether the run parks now (pure; the `parkNow` guard): a durable root run asked to suspend
 * (or configured to), with nothing in flight, while the current call's approval wait is open.
 */
export function parkNow(state: RunState): boolean {
  if (!parksForApprovals(state)) return false;
  const slot = state.batch.slots[state.batch.cursor];
  return shouldPark(state.inFlight, slot !== undefined && state.approvals.isWaiting(`${state.runId}:${slot.key}`));
}

/** Whether the run parks at approval waits (a durable root run with suspendOnApproval, or asked by handle.suspend()). */
export function parksForApprovals(state: RunState): boolean {
  return state.runLog !== undefined && !state.parentRef && (state.suspendRequested || state.options.checkpoint?.suspendOnApproval === true);
}

/** The approvals a parking run waits for: its open waits (already withdrawn from the router by leaving the wait state). */
function parkedApprovals(state: RunState): SuspendedApproval[] {
  return state.openWaits ? [...state.openWaits.values()] : [];
}

/** The suspending state's work: store the head as "suspended" (the requests are already logged) and wait for it. */
export function parkInput(state: RunState): CheckpointInput {
  return {
    flush: () => {
      state.parked = parkedApprovals(state);
      state.runLog!.append([], head(state, 'suspended'));
      return state.runLog!.settle();
    },
  };
}

/** Entering `suspended`: the run is parked; its lease is released and the stream ends with run_suspended. */
export function emitSuspended(state: RunState): void {
  const approvals = state.parked ?? [];
  state.outcome = { status: 'suspended', runId: state.runId, approvals };
  // Leaving the approval wait withdrew it from the tree's inbox without a decision; nothing else runs.
  state.abortController.abort(new RunCancelled('run suspended'));
  void state.runLog?.close();
  state.parentRef?.send({ type: 'child.ended', runId: state.runId, status: 'suspended' });
  state.sink({ type: 'run_suspended', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, approvals, usage: { ...state.usage } });
}

/** A write to the checkpoint store (or a lease renewal) failed: the run fails now, running calls are aborted and closed. */
export function failWithStoreError(state: RunState, error: Error): void {
  fail(state, error);
  closeOpenCalls(state, `Tool error: not executed: the run's checkpoint store failed: ${error.message}`, true);
}
