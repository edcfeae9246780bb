import type { Agent } from '../agent.js';
import { ModelError, RunCancelled, TroupeError, asError } from '../errors.js';
import { replyViolation, spendViolation, turnStartViolation } from '../rules/limits.js';
import type { RunMachineContext } from '../machines/run.guards.js';
import type { ApprovalOutcome } from '../runtime/approvals.js';
import { applyEdits, cancelFromResults, claimApproved, closeOpenCalls, dispatchAlone, dispatchApproved, holdApproved, recordResults, rejectDenied, rejectInvalidEdits } from '../runtime/run-calls.js';
import { cancel, emitCompleted, emitFailed, emitSuspended, fail, failWithStoreError, failWithGuardrail, failWithOutputError, queueEndMessages, queueRepair } from '../runtime/run-end.js';
import { foldAncestorSpend, foldChildSpend, type AncestorSpendEvent, type ChildSpendEvent } from '../runtime/run-spend.js';
import type { HandoffInputFilter } from '../runtime/run-state.js';
import { applyHandoff, discardReply, endTurn, queueMessage, queueSteer, recordHandoff, recordReply, startRun, startTurn, withdrawSteer } from '../runtime/run-turn.js';
import { errorText } from '../tools/render.js';
import type { ModelReply } from './model-turn.js';
import type { ToolsSettledEvent } from './tool-executor.js';
import type { AnyActorRef } from 'xstate';
import type { RunStatus } from '../store/checkpoint-store.js';
import { trackSubRun, untrackSubRun } from '../runtime/run-subruns.js';

type ActionArgs = { context: RunMachineContext; event: { type: string } };
const ev = <T>(args: ActionArgs): T => args.event as unknown as T;

/**
 * The effects the run chart's transitions apply, by name. Each changes the run's own state
 * record (the run actor owns it) or emits events; none decides where the run goes.
 */
export const runActions = {
  startRun: ({ context }: ActionArgs) => startRun(context.run),
  recordCancel: (args: ActionArgs) => {
    const error = ev<{ error?: unknown }>(args).error;
    args.context.run.cancelError ??= error instanceof RunCancelled ? error : new RunCancelled();
  },
  recordCancelFromResults: (args: ActionArgs) => {
    args.context.run.cancelError ??= cancelFromResults(ev<ToolsSettledEvent>(args).results);
  },
  failWithConfigError: ({ context }: ActionArgs) => fail(context.run, context.run.configError!),
  failWithTurnLimit: ({ context }: ActionArgs) => fail(context.run, turnStartViolation(context.run, Date.now()) ?? new TroupeError('turn limit reached')),
  startTurn: ({ context }: ActionArgs) => startTurn(context.run),
  recordReply: (args: ActionArgs) => recordReply(args.context.run, ev<{ output: ModelReply }>(args).output),
  discardReply: (args: ActionArgs) => discardReply(args.context.run, ev<{ output: ModelReply }>(args).output),
  closeStoppedCalls: ({ context }: ActionArgs) => closeOpenCalls(context.run, 'Tool error: not executed: afterModelResponse ended the run', false),
  queueRepair: ({ context }: ActionArgs) => queueRepair(context.run),
  failWithOutputError: ({ context }: ActionArgs) => failWithOutputError(context.run),
  queueEndMessages: (args: ActionArgs) => queueEndMessages(args.context.run, ev<{ output: string[] }>(args).output),
  markInputChecked: ({ context }: ActionArgs) => void (context.run.inputChecked = true),
  failWithGuardrail: (args: ActionArgs) => {
    const error = ev<{ error: unknown }>(args).error;
    failWithGuardrail(args.context.run, error instanceof Error ? error : new TroupeError(errorText(error)));
  },
  failWithEndError: (args: ActionArgs) => {
    const error = ev<{ error: unknown }>(args).error;
    fail(args.context.run, error instanceof TroupeError ? error : new TroupeError(`run end checks failed: ${errorText(error)}`, { cause: error }));
  },
  failWithModelError: (args: ActionArgs) => fail(args.context.run, asModelError(ev<{ error: unknown }>(args).error)),
  stopOverBudget: ({ context }: ActionArgs) => void (context.run.stopError ??= replyViolation(context.run, Date.now())),
  stopOverSpend: ({ context }: ActionArgs) => void (context.run.stopError ??= spendViolation(context.run)),
  rejectDenied: (args: ActionArgs) => rejectDenied(args.context.run, ev<{ output: ApprovalOutcome }>(args).output),
  dispatchApproved: ({ context }: ActionArgs) => dispatchApproved(context.run),
  applyEdits: (args: ActionArgs) => applyEdits(args.context.run, ev<{ output: ApprovalOutcome }>(args).output),
  rejectInvalidEdits: (args: ActionArgs) => rejectInvalidEdits(args.context.run, ev<{ output: ApprovalOutcome }>(args).output),
  holdApproved: ({ context }: ActionArgs) => holdApproved(context.run),
  queueSteer: (args: ActionArgs) => {
    const { queue, id, text } = ev<{ queue: 'steer' | 'follow_up'; id: string; text: string }>(args);
    queueSteer(args.context.run, queue, { id, text });
  },
  withdrawSteer: (args: ActionArgs) => withdrawSteer(args.context.run, ev<{ id: string }>(args).id),
  claimApproved: ({ context }: ActionArgs) => claimApproved(context.run),
  dispatchAlone: ({ context }: ActionArgs) => dispatchAlone(context.run),
  recordResults: (args: ActionArgs) => recordResults(args.context.run, ev<ToolsSettledEvent>(args).results),
  closeForStop: ({ context }: ActionArgs) => closeOpenCalls(context.run, `Tool error: not executed: ${context.run.stopError?.message ?? 'run stopped'}`, false),
  closeUnfinishedCalls: ({ context }: ActionArgs) => closeOpenCalls(context.run, 'Tool error: not executed: the turn ended before this call ran', true),
  endTurn: ({ context }: ActionArgs) => endTurn(context.run),
  applyHandoff: ({ context }: ActionArgs) => applyHandoff(context.run),
  recordHandoff: (args: ActionArgs) => {
    const { target, inputFilter } = ev<{ target: Agent; inputFilter?: HandoffInputFilter }>(args);
    recordHandoff(args.context.run, target, inputFilter);
  },
  queueMessage: (args: ActionArgs) => queueMessage(args.context.run, ev<{ text: string }>(args).text),
  foldChildSpend: (args: ActionArgs) => foldChildSpend(args.context.run, ev<ChildSpendEvent>(args)),
  foldAncestorSpend: (args: ActionArgs) => foldAncestorSpend(args.context.run, ev<AncestorSpendEvent>(args)),
  trackSubRun: (args: ActionArgs) => {
    const { runId, ref } = ev<{ runId: string; ref: AnyActorRef }>(args);
    trackSubRun(args.context.run, runId, ref);
  },
  untrackSubRun: (args: ActionArgs) => {
    const { runId, status } = ev<{ runId: string; status: RunStatus }>(args);
    untrackSubRun(args.context.run, runId, status);
  },
  failWithStoreError: (args: ActionArgs) => {
    const error = ev<{ error: unknown }>(args).error;
    // RunLocked and other typed errors stay as they are; a store's own error is named as a checkpoint failure.
    failWithStoreError(args.context.run, error instanceof TroupeError ? error : new TroupeError(`checkpoint write failed: ${errorText(error)}`, { cause: error }));
  },
  requestSuspend: ({ context }: ActionArgs) => void (context.run.suspendRequested = true),
  emitSuspended: ({ context }: ActionArgs) => emitSuspended(context.run),
  cancel: ({ context }: ActionArgs) => cancel(context.run),
  failWithCheckpointError: (args: ActionArgs) => {
    const error = ev<{ error: unknown }>(args).error;
    fail(args.context.run, new TroupeError(`checkpoint write failed: ${errorText(error)}`, { cause: error }));
  },
  failWithSessionError: (args: ActionArgs) => {
    const error = ev<{ error: unknown }>(args).error;
    fail(args.context.run, new TroupeError(`session write failed: ${errorText(error)}`, { cause: error }));
  },
  // A refused or failed restore is reported like a bad option: run_started, then run_failed; nothing is written.
  failWithRestoreError: (args: ActionArgs) => {
    const error = ev<{ error: unknown }>(args).error;
    args.context.run.configError = error instanceof TroupeError ? error : new TroupeError(`checkpoint load failed: ${errorText(error)}`, { cause: error });
  },
  emitCompleted: ({ context }: ActionArgs) => emitCompleted(context.run),
  emitFailed: ({ context }: ActionArgs) => emitFailed(context.run),
};

export type RunActionName = keyof typeof runActions;

function asModelError(error: unknown): Error {
  if (error instanceof TroupeError) return error;
  return new ModelError(errorText(asError(error)), { cause: error });
}
