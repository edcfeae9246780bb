import { assertEvent, raise, stopChild } from 'xstate';
import { ModelError, RunCancelled, TroupeError, asError } from '../errors.js';
import { replyViolation, spendViolation, turnStartViolation } from '../rules/limits.js';
import { applyEdits, approvalOutcome, claimApproved, dispatchApproved, holdApproved, recordDecision, rejectDenied, rejectInvalidEdits } from '../runtime/run-approvals.js';
import { applyResolutions } from '../runtime/call-resolution.js';
import { admitCalls, cancelFromResults, closeOpenCalls, dispatchAlone, recordResults } from '../runtime/run-calls.js';
import { cancel, emitCompleted, emitFailed, fail, failWithGuardrail, failWithOutputError, failWithStoreError, queueEndMessages, queueRepair, saveCheckpoint } from '../runtime/run-end.js';
import { emitSuspended, parkRun } from '../runtime/run-park.js';
import { applyRestore } from '../runtime/run-restore.js';
import { closePlugins } from '../runtime/run-plugins.js';
import { applyAgentSetup } from '../runtime/run-state.js';
import { foldAncestorSpend, foldChildSpend } from '../runtime/run-spend.js';
import { trackSubRun, untrackSubRun } from '../runtime/run-subruns.js';
import { applyHandoff, discardReply, endTurn, queueMessage, queueSteer, recordHandoff, recordReply, requestModel, startRun, startTurn, withdrawSteer } from '../runtime/run-turn.js';
import { errorText } from '../tools/render.js';
import type { RunMachineEvent } from './run-events.js';
import type { RunMachineContext } from './run.guards.js';

/** What an action is given: the context and the event, typed; actions narrow the event with `assertEvent`. */
export interface RunActionArgs {
  readonly context: RunMachineContext;
  readonly event: RunMachineEvent;
}

/** A typed error for the run from what a store, hook or model threw; typed errors stay as they are. */
function named(error: unknown, what: string): Error {
  return error instanceof TroupeError ? error : new TroupeError(`${what}: ${errorText(error)}`, { cause: error });
}

/**
 * The effects the run chart's transitions apply, by name. Each changes the run's own state
 * record (the run actor owns it), emits events or starts async work that reports back by
 * event; none decides where the run goes (that is the guards' and the chart's job).
 */
export const runActions = {
  // ── starting ──
  startRun: ({ context }: RunActionArgs) => startRun(context.run),
  applyRestore: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.done.actor.restore');
    applyRestore(context.run, event.output);
  },
  // A refused or failed restore is reported like a bad option: run_started, then run_failed; nothing is written.
  failWithRestoreError: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.error.actor.restore');
    context.run.configError = named(event.error, 'checkpoint load failed');
  },
  failWithConfigError: ({ context }: RunActionArgs) => fail(context.run, context.run.configError!),
  recordCancel: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'CANCEL');
    context.run.cancelError ??= event.error instanceof RunCancelled ? event.error : new RunCancelled();
  },
  // ── a turn ──
  failWithTurnLimit: ({ context }: RunActionArgs) => fail(context.run, turnStartViolation(context.run, Date.now()) ?? new TroupeError('turn limit reached')),
  startTurn: ({ context }: RunActionArgs) => startTurn(context.run),
  applyPluginSetup: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.done.actor.pluginSetup');
    applyAgentSetup(context.run, event.output);
  },
  failWithPluginError: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.error.actor.pluginSetup');
    fail(context.run, named(event.error, 'plugin setup failed'));
  },
  requestModel: ({ context }: RunActionArgs) => requestModel(context.run),
  recordReply: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'model.replied');
    recordReply(context.run, event.output);
  },
  discardReply: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'model.replied');
    discardReply(context.run, event.output);
  },
  failWithModelError: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'model.failed');
    fail(context.run, event.error instanceof TroupeError ? event.error : new ModelError(errorText(asError(event.error)), { cause: event.error }));
  },
  stopOverBudget: ({ context }: RunActionArgs) => void (context.run.stopError ??= replyViolation(context.run, Date.now()) ?? new TroupeError('budget exceeded')),
  closeStoppedCalls: ({ context }: RunActionArgs) => closeOpenCalls(context.run, 'Tool error: not executed: afterModelResponse ended the run', false),
  // ── the tool-call phase ──
  applyResolutions: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.done.actor.resolve');
    applyResolutions(context.run, event.output);
  },
  // Preflight's verdict is an event: the chart, not a flag, decides where the run goes.
  // (`raise` evaluates its event once, when the entry runs.)
  admitCalls: raise<RunMachineContext, RunMachineEvent, RunMachineEvent, undefined, never, never>(({ context }) => ({ type: admitCalls(context.run) })),
  recordDecision: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.done.actor.approval');
    recordDecision(context.run, approvalOutcome(event.output));
  },
  rejectDenied: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.done.actor.approval');
    rejectDenied(context.run, approvalOutcome(event.output));
  },
  rejectInvalidEdits: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.done.actor.approval');
    rejectInvalidEdits(context.run, approvalOutcome(event.output));
  },
  applyEdits: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.done.actor.approval');
    applyEdits(context.run, approvalOutcome(event.output));
  },
  claimApproved: ({ context }: RunActionArgs) => claimApproved(context.run),
  holdApproved: ({ context }: RunActionArgs) => holdApproved(context.run),
  dispatchApproved: ({ context }: RunActionArgs) => dispatchApproved(context.run),
  dispatchAlone: ({ context }: RunActionArgs) => dispatchAlone(context.run),
  recordResults: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'tools.settled');
    recordResults(context.run, event.results);
  },
  recordCancelFromResults: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'tools.settled');
    context.run.cancelError ??= cancelFromResults(event.results);
  },
  // ── the end of a turn ──
  closeForStop: ({ context }: RunActionArgs) => closeOpenCalls(context.run, `Tool error: not executed: ${context.run.stopError?.message ?? 'run stopped'}`, false),
  closeUnfinishedCalls: ({ context }: RunActionArgs) => closeOpenCalls(context.run, 'Tool error: not executed: the turn ended before this call ran', true),
  stopOverSpend: ({ context }: RunActionArgs) => void (context.run.stopError ??= spendViolation(context.run)),
  saveCheckpoint: ({ context }: RunActionArgs) => saveCheckpoint(context.run),
  markTurnSaved: ({ context }: RunActionArgs) => void (context.run.turnSaved = true),
  endTurn: ({ context }: RunActionArgs) => endTurn(context.run),
  applyHandoff: ({ context }: RunActionArgs) => applyHandoff(context.run),
  queueRepair: ({ context }: RunActionArgs) => queueRepair(context.run),
  failWithOutputError: ({ context }: RunActionArgs) => failWithOutputError(context.run),
  queueEndMessages: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.done.actor.runEnd');
    queueEndMessages(context.run, event.output);
  },
  recordStopAfterTurn: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.done.actor.afterTurn');
    context.run.batch.stopAfterTurn = event.output;
  },
  failWithAfterTurnError: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.error.actor.afterTurn');
    fail(context.run, named(event.error, 'shouldStopAfterTurn failed'));
  },
  failWithEndError: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.error.actor.runEnd');
    fail(context.run, named(event.error, 'run end checks failed'));
  },
  failWithSessionError: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'xstate.error.actor.session');
    fail(context.run, new TroupeError(`session write failed: ${errorText(event.error)}`, { cause: event.error }));
  },
  // ── messages from anywhere ──
  queueSteer: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'steer.add');
    queueSteer(context.run, event.queue, event.message ? { id: event.id, text: event.text, message: event.message } : { id: event.id, text: event.text });
  },
  withdrawSteer: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'steer.remove');
    withdrawSteer(context.run, event.id);
  },
  queueMessage: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'mailbox.post');
    queueMessage(context.run, event.text);
  },
  recordHandoff: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'handoff.request');
    recordHandoff(context.run, event.target, event.inputFilter);
  },
  foldChildSpend: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'child.spend');
    foldChildSpend(context.run, event);
  },
  foldAncestorSpend: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'ancestor.spend');
    foldAncestorSpend(context.run, event);
  },
  trackSubRun: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'child.started');
    trackSubRun(context.run, event.runId, event.ref);
  },
  untrackSubRun: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'child.ended');
    untrackSubRun(context.run, event.runId, event.status);
  },
  markInputChecked: ({ context }: RunActionArgs) => void (context.run.inputChecked = true),
  failWithGuardrail: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'guardrail.tripped');
    failWithGuardrail(context.run, event.error instanceof Error ? event.error : new TroupeError(errorText(event.error)));
  },
  // RunLocked and other typed errors stay as they are; a store's own error is named as a checkpoint failure.
  failWithStoreError: ({ context, event }: RunActionArgs) => {
    assertEvent(event, 'log.failed');
    failWithStoreError(context.run, named(event.error, 'checkpoint write failed'));
  },
  requestSuspend: ({ context }: RunActionArgs) => void (context.run.suspendRequested = true),
  // ── the end of a run ──
  parkRun: ({ context }: RunActionArgs) => parkRun(context.run),
  emitSuspended: ({ context }: RunActionArgs) => emitSuspended(context.run),
  cancel: ({ context }: RunActionArgs) => cancel(context.run),
  emitCompleted: ({ context }: RunActionArgs) => emitCompleted(context.run),
  emitFailed: ({ context }: RunActionArgs) => emitFailed(context.run),
  closePlugins: ({ context }: RunActionArgs) => closePlugins(context.run),
  // The tool executor is created with the run's first call (a run without calls never has one); it goes with the run.
  // (A run without one names no child: '' is no child's id.)
  stopToolExecutor: stopChild<RunMachineContext, RunMachineEvent, undefined, RunMachineEvent>(({ context }) => context.run.executor ?? ''),
};

export type RunActionName = keyof typeof runActions;
