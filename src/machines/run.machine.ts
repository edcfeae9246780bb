import { raise, sendTo, setup } from 'xstate';
import type { Agent } from '../agent.js';
import { approvalActor } from '../actors/approval.js';
import { checkpointActor, restoreActor, runEndActor, sessionSaveActor } from '../actors/checkpoint.js';
import { ModelRequestEvent, modelCallerLogic, type ModelAnswerEvent } from '../actors/model-caller.js';
import { runActions } from '../actors/run-actions.js';
import { toolExecutorLogic, type ToolsSettledEvent } from '../actors/tool-executor.js';
import { admitCalls, approvalInput, type PreflightVerdictEvent } from '../runtime/run-calls.js';
import { parkInput, runEndInput, saveCheckpoint, type CheckpointEvent } from '../runtime/run-end.js';
import { restoreInput, sessionInput } from '../runtime/run-restore.js';
import type { AncestorSpendEvent, ChildSpendEvent, SubRunLifecycleEvent } from '../runtime/run-spend.js';
import { createRunState, type HandoffInputFilter, type RunInput, type RunOutcome } from '../runtime/run-state.js';
import { modelInput } from '../runtime/run-turn.js';
import { runGuards, type RunMachineContext } from './run.guards.js';

export type { RunMachineContext } from './run.guards.js';

/** Messages a run actor accepts. Runs talk to each other only through these. */
export type RunMachineEvent =
  | { type: 'START' }
  /** Cancel the run (handle.cancel, an aborted signal, a parent cancelling its sub-run). */
  | { type: 'CANCEL'; error?: Error }
  | ChildSpendEvent
  | AncestorSpendEvent
  | SubRunLifecycleEvent
  /** A tool posted a message for the model (`ctx.mailbox.post`). */
  | { type: 'mailbox.post'; text: string }
  /** A handoff tool asks for the switch; it happens when the turn ends. */
  | { type: 'handoff.request'; target: Agent; inputFilter?: HandoffInputFilter }
  /** The caller queues a message: for the next model request (steer) or for when the run would end (follow_up). */
  | { type: 'steer.add'; queue: 'steer' | 'follow_up'; id: string; text: string }
  /** The caller withdraws a queued message it has not seen injected. */
  | { type: 'steer.remove'; id: string }
  /** The input guardrails (running beside the first turn) passed, or one tripped. */
  | { type: 'guardrail.passed' }
  | { type: 'guardrail.tripped'; error: Error }
  /** The run's log could not be written (store error, lost lease): the run fails at once. */
  | { type: 'log.failed'; error: Error }
  /** Park the run at its next approval wait (durable runs; `handle.suspend()`). */
  | { type: 'SUSPEND' }
  /** An approval wait of the current call opened (the predicate said a decision is needed). */
  | { type: 'approval.opened'; approvalId: string }
  | ToolsSettledEvent
  | ModelAnswerEvent
  | CheckpointEvent
  | PreflightVerdictEvent;

/**
 * Where a turn goes once it has ended (`endTurn` reports turn_ended first). Shared by
 * `afterTools` (no checkpoint store: `endTurn` on these transitions) and `turnEnd` (after the
 * checkpoint, whose entry is `endTurn`). The guards read nothing `endTurn` changes.
 */
function afterTurnEnd(...actions: Array<'endTurn'>) {
  return [
    { guard: 'runFinished', target: 'closing', actions },
    { guard: 'handoffPending', target: 'handoff', actions },
    // Leaving and re-entering `turn` starts the next turn from checkLimits.
    { target: '#run.turn', reenter: true, actions },
  ] as const;
}

/**
 * `afterTools` without a checkpoint store: `afterTurnEnd('endTurn')` with two shortcuts that
 * save microsteps on the common paths, each doing exactly what the longer way does. A run
 * that completes with nothing left to check or save goes straight to `completed` (what
 * closing → finishing → completed do then); the next turn starts at `turn.model` with the
 * turn-limit check on the transition (what re-entering `turn` through checkLimits does).
 */
const endTurnUnsaved = [
  { guard: 'completesNow', target: '#run.completed', actions: 'endTurn' },
  { guard: 'runFinished', target: 'closing', actions: 'endTurn' },
  { guard: 'handoffPending', target: 'handoff', actions: 'endTurn' },
  { guard: 'turnLimitReached', target: '#run.failed', actions: ['endTurn', 'failWithTurnLimit'] },
  { target: '#run.turn.model', actions: ['endTurn', 'startTurn'] },
] as const;

/**
 * The run statechart. Every rule that decides where a run goes is a named guard (pure, in
 * run.guards.ts, calling src/rules) or a state; actions (src/actors/run-actions.ts) only
 * apply effects. Swap any of them in tests with `.provide()`.
 *
 * turn = checkLimits → model → replied → executing[preflight ⇄ approvalWait / barrier → draining]
 *        → afterTools → (checkpoint → turnEnd) → [closing → ending] | [handoff] → next turn | finishing
 * terminal: completed, failed, cancelled (cancel reports run_failed(RunCancelled)), suspended
 * (a durable run parked at an approval wait: suspending stores it, then the lease is released).
 */
export const runMachine = setup({
  types: {} as { context: RunMachineContext; events: RunMachineEvent; input: RunInput; output: RunOutcome },
  guards: runGuards,
  actions: {
    ...runActions,
    // Preflight's verdict is an event: the chart, not a flag, decides where the run goes.
    // (`raise` evaluates its event once, when the entry runs; cheaper than enqueueActions.)
    admitCalls: raise(({ context }) => ({ type: admitCalls((context as RunMachineContext).run) })),
    saveCheckpoint: ({ context }) => saveCheckpoint((context as RunMachineContext).run),
    // Sent after the step that entered `turn.model` (XState defers sendTo), so the request sees every entry action of the turn.
    requestModel: sendTo('model', ({ context }) => {
      const run = (context as RunMachineContext).run;
      return new ModelRequestEvent(modelInput(run), run.abortController);
    }),
  },
  actors: {
    modelCaller: modelCallerLogic,
    approval: approvalActor,
    checkpoint: checkpointActor,
    restore: restoreActor,
    sessionSave: sessionSaveActor,
    runEnd: runEndActor,
    toolExecutor: toolExecutorLogic,
  },
}).createMachine({
  id: 'run',
  context: ({ input, self }) => ({ run: createRunState(input, self) }),
  output: ({ context }) => context.run.outcome!,
  // Waits for START so the first steps run in a started actor: in XState's initial
  // macrostep, invoked actors start before deferred entry actions run.
  initial: 'idle',
  // Live for the whole run: the executor hosts one child actor per tool call; the model
  // caller makes the run's model requests (one message each way per turn).
  invoke: [
    { id: 'tools', src: 'toolExecutor' },
    { id: 'model', src: 'modelCaller' },
  ],
  on: {
    CANCEL: { target: '.cancelled', actions: 'recordCancel' },
    'tools.settled': [
      // A tool raised RunCancelled: the whole run (and its tree) is cancelled.
      { guard: 'resultsCancelRun', target: '.cancelled', actions: ['recordResults', 'recordCancelFromResults'] },
      { actions: 'recordResults' },
    ],
    'child.spend': { actions: 'foldChildSpend' },
    'ancestor.spend': { actions: 'foldAncestorSpend' },
    'child.started': { actions: 'trackSubRun' },
    'child.ended': { actions: 'untrackSubRun' },
    'mailbox.post': { actions: 'queueMessage' },
    'handoff.request': { actions: 'recordHandoff' },
    'steer.add': { actions: 'queueSteer' },
    'steer.remove': { actions: 'withdrawSteer' },
    'guardrail.passed': { actions: 'markInputChecked' },
    // An input guardrail tripped (from any state, tools running or not): the run fails with it.
    'guardrail.tripped': { target: '.failed', actions: 'failWithGuardrail' },
    // The store refused or failed a write (or the lease was lost): running calls abort, the run fails now.
    'log.failed': { target: '.failed', actions: 'failWithStoreError' },
    SUSPEND: { actions: 'requestSuspend' },
  },
  states: {
    idle: {
      on: {
        // Cancelled before it started: it still reports run_started, then run_failed, and asks no model.
        CANCEL: { actions: 'recordCancel' },
        START: [
          { guard: 'hasConfigError', target: 'starting' },
          { guard: 'needsLoading', target: 'restoring' },
          // A fresh run that may start its first turn: run_started and turn 1 in one step
          // (what starting → turn.checkLimits → turn.model do for it).
          { guard: 'startsFirstTurn', target: '#run.turn.model', actions: ['startRun', 'startTurn'] },
          { target: 'starting' },
        ],
      },
    },
    // Durable runs and sessions: load the history and the stored log before the first step.
    restoring: {
      on: { CANCEL: { actions: 'recordCancel' } },
      invoke: {
        id: 'restore',
        src: 'restore',
        input: ({ context }) => restoreInput(context.run),
        onDone: { target: 'starting' },
        // Refused (locked, "fail", damaged log, unreachable agent): run_started, run_failed; nothing written.
        onError: { target: 'starting', actions: 'failWithRestoreError' },
      },
    },
    starting: {
      entry: 'startRun',
      always: [
        { guard: 'hasConfigError', target: 'failed', actions: 'failWithConfigError' },
        { guard: 'cancelRequested', target: 'cancelled' },
        { guard: 'replayCompleted', target: 'finishing' },
        // Resumed inside a turn: continue from its stored reply; calls with stored results are skipped.
        { guard: 'resumeInTurn', target: '#run.turn.replied' },
        { target: 'turn' },
      ],
    },
    turn: {
      initial: 'checkLimits',
      states: {
        checkLimits: {
          // A cancel before the run started is seen in `starting`; later ones leave the turn at once.
          always: [
            { guard: 'turnLimitReached', target: '#run.failed', actions: 'failWithTurnLimit' },
            { target: 'model', actions: 'startTurn' },
          ],
        },
        model: {
          entry: 'requestModel',
          on: {
            'model.replied': [
              // afterModelResponse asked for a retry: the reply is void, a new turn asks again.
              { guard: 'replyRetried', target: '#run.turn', reenter: true, actions: 'discardReply' },
              // Calls, no verdict and no budget anywhere to check: on to preflight in this step (what `replied` decides then).
              { guard: 'replyDispatches', target: 'executing', actions: 'recordReply' },
              // Text only, no verdict, no budget: straight to afterTools (likewise).
              { guard: 'replyEndsTurn', target: 'afterTools', actions: 'recordReply' },
              { target: 'replied', actions: 'recordReply' },
            ],
            'model.failed': { target: '#run.failed', actions: 'failWithModelError' },
          },
        },
        replied: {
          always: [
            { guard: 'replyOverBudget', target: '#run.stopping', actions: 'stopOverBudget' },
            // afterModelResponse said stop: the reply is the final output, its calls never run.
            { guard: 'replyStops', target: 'afterTools', actions: 'closeStoppedCalls' },
            { guard: 'noToolCalls', target: 'afterTools' },
            { target: 'executing' },
          ],
        },
        // The tool-call phase: serial preflight, approval waits and barriers, while
        // dispatched calls run as child actors of the executor.
        executing: {
          initial: 'preflight',
          states: {
            preflight: {
              entry: 'admitCalls',
              on: {
                'preflight.stop': { target: '#run.stopping' },
                'preflight.approval': { target: 'approvalWait' },
                'preflight.alone': { target: 'barrier' },
                'preflight.done': { target: 'draining' },
                'preflight.full': { target: 'throttled' },
              },
            },
            // maxConcurrentToolCalls: the next cleared call waits for a free slot, in request order.
            throttled: { always: { guard: 'hasCapacity', target: 'preflight' } },
            approvalWait: {
              // Durable runs may park here: nothing in flight and only this decision awaited.
              always: { guard: 'parkNow', target: '#run.suspending' },
              on: { 'approval.opened': { guard: 'parkNow', target: '#run.suspending' } },
              invoke: {
                id: 'approval',
                src: 'approval',
                input: ({ context }) => approvalInput(context.run),
                onDone: [
                  { guard: 'approvalDenied', target: 'preflight', actions: 'rejectDenied' },
                  // Approved with edited arguments that do not validate: an error result, never run.
                  { guard: 'editsInvalid', target: 'preflight', actions: 'rejectInvalidEdits' },
                  { guard: 'currentCallRunsAlone', target: 'barrier', actions: ['applyEdits', 'claimApproved'] },
                  { guard: 'atCapacity', target: 'throttled', actions: ['applyEdits', 'holdApproved'] },
                  { target: 'preflight', actions: ['applyEdits', 'dispatchApproved'] },
                ],
              },
            },
            barrier: {
              initial: 'waitingForInFlight',
              states: {
                waitingForInFlight: { always: { guard: 'nothingInFlight', target: 'runningAlone' } },
                runningAlone: {
                  entry: 'dispatchAlone',
                  always: { guard: 'nothingInFlight', target: '#run.turn.executing.preflight' },
                },
              },
            },
            draining: {
              always: { guard: 'nothingInFlight', target: '#run.turn.afterTools' },
              // The batch's last results: recorded and on to afterTools in one step. Other results
              // (and a tool's RunCancelled) are the root's `tools.settled`.
              on: { 'tools.settled': { guard: 'lastResultsIn', target: '#run.turn.afterTools', actions: 'recordResults' } },
            },
          },
        },
        afterTools: {
          // Safety net for "exactly one result": nothing should be open here.
          entry: 'closeUnfinishedCalls',
          always: [
            { guard: 'stopRequested', target: '#run.stopping' },
            { guard: 'spendOverBudget', target: '#run.stopping', actions: 'stopOverSpend' },
            { guard: 'checkpointing', target: 'checkpoint' },
            // Without a store the turn ends right here (one step less per turn than going through turnEnd).
            ...endTurnUnsaved,
          ],
        },
        // Waits for the turn's writes (saveCheckpoint answers with a message: no actor per turn).
        checkpoint: {
          entry: 'saveCheckpoint',
          on: {
            'checkpoint.saved': { target: 'turnEnd' },
            'checkpoint.failed': { target: '#run.failed', actions: 'failWithCheckpointError' },
          },
        },
        // A checkpointed turn ends once its log is written.
        turnEnd: { entry: 'endTurn', always: afterTurnEnd() },
        // The run would complete (checked only then, so a turn that goes on pays nothing for it).
        closing: {
          always: [
            // outputType: an invalid final reply gets one repair turn, then OutputValidationError.
            { guard: 'outputNeedsRepair', target: '#run.turn', reenter: true, actions: 'queueRepair' },
            { guard: 'outputInvalid', target: '#run.failed', actions: 'failWithOutputError' },
            { guard: 'endChecksPending', target: 'ending' },
            { target: '#run.finishing' },
          ],
        },
        // Output guardrails, then onRunEnd hooks (whose messages continue it).
        ending: {
          invoke: {
            id: 'runEnd',
            src: 'runEnd',
            input: ({ context }) => runEndInput(context.run),
            onDone: [
              { guard: 'endHookContinues', target: '#run.turn', reenter: true, actions: 'queueEndMessages' },
              { target: '#run.finishing' },
            ],
            onError: { target: '#run.failed', actions: 'failWithEndError' },
          },
        },
        handoff: {
          entry: 'applyHandoff',
          always: [{ guard: 'stopRequested', target: '#run.stopping' }, { target: '#run.turn', reenter: true }],
        },
      },
    },
    // Budget stop: calls that never ran get their result, in-flight calls finish and are saved.
    stopping: {
      entry: 'closeForStop',
      initial: 'draining',
      states: {
        draining: { always: { guard: 'nothingInFlight', target: 'saving' } },
        saving: { always: [{ guard: 'checkpointing', target: 'checkpoint' }, { target: '#run.failed' }] },
        checkpoint: {
          entry: 'saveCheckpoint',
          on: {
            'checkpoint.saved': { target: '#run.failed' },
            'checkpoint.failed': { target: '#run.failed', actions: 'failWithCheckpointError' },
          },
        },
      },
    },
    // Parked for approvals: the head is stored as "suspended", then the lease is released.
    suspending: {
      invoke: {
        id: 'park',
        src: 'checkpoint',
        input: ({ context }) => parkInput(context.run),
        onDone: { target: 'suspended' },
        onError: { target: 'failed', actions: 'failWithCheckpointError' },
      },
    },
    // Completed runs join their session before run_completed, so the next run sees them.
    finishing: { always: [{ guard: 'noSession', target: 'completed' }, { target: 'savingSession' }] },
    savingSession: {
      invoke: {
        id: 'session',
        src: 'sessionSave',
        input: ({ context }) => sessionInput(context.run),
        onDone: { target: 'completed' },
        onError: { target: 'failed', actions: 'failWithSessionError' },
      },
    },
    completed: { type: 'final', entry: 'emitCompleted' },
    failed: { type: 'final', entry: 'emitFailed' },
    cancelled: { type: 'final', entry: ['cancel', 'emitFailed'] },
    suspended: { type: 'final', entry: 'emitSuspended' },
  },
});

export type RunMachine = typeof runMachine;
