import { ModelError, RunCancelled, TroupeError, asError } from '../errors.js';
import type { RunMachineContext, RunMachineImplementation } from '../machines/run.machine.js';
import type { RunCore } from '../runtime/run-core.js';
import { approvalActor } from './approval.js';
import { checkpointActor, restoreActor, sessionSaveActor } from './checkpoint.js';
import { modelTurnActor } from './model-turn.js';
import { toolExecutorLogic } from './tool-executor.js';

const core = (context: RunMachineContext): RunCore => context.run as RunCore;

/** Binds the pure run statechart's named guards, actions and actors to a RunCore. */
export const runImplementation: RunMachineImplementation = {
  guards: {
    hasConfigError: ({ context }) => core(context).configError !== undefined,
    cancelRequested: ({ context }) => core(context).cancelError !== undefined,
    turnLimitReached: ({ context }) => core(context).turnStartViolation() !== undefined,
    replyOverBudget: ({ context }) => core(context).checkReplyBudget(),
    noToolCalls: ({ context }) => !core(context).hasToolCalls,
    haltedForStop: ({ context }) => core(context).halt === 'stop',
    haltedForCancel: ({ context }) => core(context).halt === 'cancel',
    haltedForApproval: ({ context }) => core(context).halt === 'approval',
    haltedToRunAlone: ({ context }) => core(context).halt === 'alone',
    nothingInFlight: ({ context }) => core(context).inFlight === 0,
    stopRequested: ({ context }) => core(context).stopError !== undefined,
    checkpointing: ({ context }) => core(context).hasCheckpointStore,
    finished: ({ context }) => core(context).finished,
    handoffPending: ({ context }) => core(context).handoffPending,
    spendOverBudget: ({ context }) => core(context).checkSpend(),
    replayCompleted: ({ context }) => core(context).replayCompleted,
    resumeInTurn: ({ context }) => core(context).resumeInTurn,
    needsLoading: ({ context }) => core(context).needsLoading,
    noSession: ({ context }) => !core(context).hasSession,
  },
  actions: {
    failWithConfigError: ({ context }) => core(context).fail(core(context).configError!),
    startRun: ({ context }) => core(context).startRun(),
    failWithTurnLimit: ({ context }) => core(context).fail(core(context).turnStartViolation()!),
    startTurn: ({ context }) => core(context).startTurn(),
    recordReply: ({ context, event }) => core(context).recordReply(event.output),
    failWithModelError: ({ context, event }) => core(context).fail(asModelError(event.error)),
    runPreflight: ({ context }) => core(context).preflight(),
    applyApproval: ({ context, event }) => core(context).applyApproval(event.output === true),
    dispatchAlone: ({ context }) => core(context).dispatchAlone(),
    closeForStop: ({ context }) => core(context).closeForStop(),
    closeUnfinishedCalls: ({ context }) => core(context).closeOpenCalls('Tool error: not executed: the turn ended before this call ran', true),
    endTurn: ({ context }) => core(context).endTurn(),
    applyHandoff: ({ context }) => core(context).applyHandoff(),
    cancel: ({ context, event }) => {
      const run = core(context);
      run.cancel(event.error instanceof RunCancelled ? event.error : (run.cancelError ?? new RunCancelled()));
    },
    failWithCheckpointError: ({ context, event }) =>
      core(context).fail(new TroupeError(`checkpoint write failed: ${asError(event.error).message}`, { cause: event.error })),
    emitCompleted: ({ context }) => core(context).emitCompleted(),
    emitFailed: ({ context }) => core(context).emitFailed(),
    foldChildSpend: ({ context, event }) => core(context).foldChildSpend(event.spend),
    failWithSessionError: ({ context, event }) =>
      core(context).fail(new TroupeError(`session write failed: ${asError(event.error).message}`, { cause: event.error })),
    failWithRestoreError: ({ context, event }) => core(context).fail(event.error instanceof TroupeError ? event.error : new TroupeError(`checkpoint load failed: ${asError(event.error).message}`, { cause: event.error })),
  },
  actors: {
    modelTurn: modelTurnActor,
    approval: approvalActor,
    checkpoint: checkpointActor,
    restore: restoreActor,
    sessionSave: sessionSaveActor,
    toolExecutor: toolExecutorLogic,
  },
  inputs: {
    modelTurn: (context) => core(context).modelInput(),
    approval: (context) => core(context).approvalInput(),
    checkpoint: (context) => core(context).checkpointInput(),
    restore: (context) => core(context).restoreInput(),
    sessionSave: (context) => core(context).sessionInput(),
    toolExecutor: (context) => core(context),
  },
};

function asModelError(error: unknown): Error {
  if (error instanceof TroupeError) return error;
  return new ModelError(asError(error).message, { cause: error });
}
