import { setup } from 'xstate';
import { pluginSetupActor, resolveCallsActor, restoreActor, runEndActor, sessionSaveActor, stopAfterTurnActor } from '../actors/run-work.js';
import { resolveInput } from '../runtime/call-resolution.js';
import { waitMachine } from '../waits/wait.machine.js';
import { approvalInput } from '../runtime/run-approvals.js';
import { runEndInput } from '../runtime/run-end.js';
import { stopAfterTurnInput } from '../runtime/run-hooks.js';
import { pluginSetupInput } from '../runtime/run-plugins.js';
import { restoreInput, sessionInput } from '../runtime/run-restore.js';
import { createRunState, type RunInput, type RunOutcome } from '../runtime/run-state.js';
import type { RunMachineEvent } from './run-events.js';
import { runActions } from './run.actions.js';
import { runGuards, type RunMachineContext } from './run.guards.js';

export type { RunMachineContext } from './run.guards.js';
export type { RunMachineEvent } from './run-events.js';

/**
 * The run statechart: the spec of a run (docs/architecture.md, "The chart"). Every rule that
 * decides where a run goes is one named guard (run.guards.ts, calling src/rules) or a state,
 * reached one way; actions (run.actions.ts) only apply effects. Swap any of them in tests
 * with `.provide()`.
 *
 * idle → [restoring] → starting → turn ⟲ → finishing → completed
 *   turn = checkLimits → [pluginSetup, once per agent and run] → model → executing (resolving → preflight ⇄ approvalWait | barrier | throttled → draining) → turnEnd
 *   turnEnd decides, in order: stop, spend, soft stop asked (afterTurn, then back), save (checkpoint, then back), repair, output, end checks
 *   (ending), finished (finishing), handoff, next turn.
 * terminal: completed, failed, cancelled (reports run_failed(RunCancelled)), suspended (a
 * durable run parked at a wait: suspending stores it, then the lease is released).
 *
 * Async work reports back by event: the model turn (`model.replied` / `model.failed`, started by
 * `requestModel`), tool calls (`tools.settled`, from the executor that hosts one actor per
 * call), the store (`checkpoint.saved`, `log.failed`), the approval wait, restore, end checks and
 * the session save (invoked actors).
 */
export const runMachine = setup({
  types: {} as { context: RunMachineContext; events: RunMachineEvent; input: RunInput; output: RunOutcome },
  guards: runGuards,
  actions: runActions,
  actors: {
    // One wait machine per approval (src/waits): the call's approval step.
    wait: waitMachine,
    restore: restoreActor,
    runEnd: runEndActor,
    afterTurn: stopAfterTurnActor,
    pluginSetup: pluginSetupActor,
    resolveCalls: resolveCallsActor,
    session: sessionSaveActor,
  },
}).createMachine({
  id: 'run',
  context: ({ input, self }) => ({ run: createRunState(input, self) }),
  output: ({ context }) => context.run.outcome!,
  // Waits for START so the first steps run in a started actor (a cancel sent right after the
  // launch is seen before the first model request).
  initial: 'idle',
  exit: 'stopToolExecutor',
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
        START: [{ guard: 'hasConfigError', target: 'starting' }, { guard: 'needsLoading', target: 'restoring' }, { target: 'starting' }],
      },
    },
    // Durable runs and sessions: the session's history and the stored log, before the first step.
    restoring: {
      on: { CANCEL: { actions: 'recordCancel' } },
      invoke: {
        id: 'restore',
        src: 'restore',
        input: ({ context }) => restoreInput(context.run),
        onDone: { target: 'starting', actions: 'applyRestore' },
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
        // Resumed inside a turn: its stored reply's calls without a stored result run now.
        { guard: 'resumeInTurnUnresolved', target: 'turn.executing.resolving' },
        { guard: 'resumeInTurn', target: 'turn.executing' },
        { target: 'turn' },
      ],
    },
    turn: {
      initial: 'checkLimits',
      states: {
        // Every turn starts here: the turn limit and the budgets are checked before the model is asked.
        checkLimits: {
          always: [
            { guard: 'turnLimitReached', target: '#run.failed', actions: 'failWithTurnLimit' },
            // The active agent's plugins are set up once per run, before its first model request (at the start, or after a handoff made it active).
            { guard: 'pluginsUnset', target: 'pluginSetup' },
            { target: 'model', actions: 'startTurn' },
          ],
        },
        // Plugins (lovia's): the active agent's plugins' setups, one at a time; their tools, instructions, hooks and view injectors join it.
        pluginSetup: {
          invoke: {
            id: 'pluginSetup',
            src: 'pluginSetup',
            input: ({ context }) => pluginSetupInput(context.run),
            onDone: { target: 'checkLimits', actions: 'applyPluginSetup' },
            // A setup that threw (PluginError) or a tool name clash with the plugins' tools (UserError).
            onError: { target: '#run.failed', actions: 'failWithPluginError' },
          },
        },
        model: {
          entry: 'requestModel',
          on: {
            'model.replied': [
              // afterModelResponse asked for a retry: the reply is void, a new turn asks again.
              { guard: 'replyRetried', target: '#run.turn', reenter: true, actions: 'discardReply' },
              { guard: 'replyOverBudget', target: '#run.stopping', actions: ['recordReply', 'stopOverBudget'] },
              // afterModelResponse said stop: the reply is the final output, its calls never run.
              { guard: 'replyStops', target: 'turnEnd', actions: ['recordReply', 'closeStoppedCalls'] },
              { guard: 'noToolCalls', target: 'turnEnd', actions: 'recordReply' },
              { guard: 'replyNeedsResolving', target: 'executing.resolving', actions: 'recordReply' },
              { target: 'executing', actions: 'recordReply' },
            ],
            'model.failed': { target: '#run.failed', actions: 'failWithModelError' },
          },
        },
        // The tool-call phase: serial preflight, approval waits and barriers, while dispatched
        // calls run as child actors of the run's executor.
        executing: {
          // A durable run parks once it only waits: everything in flight waits (for an event, a
          // time, an answer) and nothing else runs. Checked when a wait opens and after every step.
          always: { guard: 'parkNow', target: '#run.suspending' },
          on: { 'wait.opened': { guard: 'parkNow', target: '#run.suspending' } },
          initial: 'preflight',
          states: {
            // resolveToolCall hooks map the reply's calls to the calls that run (a dispatcher to
            // hidden tools) before any check, so preflight, approvals and policies judge the
            // resolved call. Entered only when the agent has such hooks (callsUnresolved).
            resolving: {
              invoke: {
                id: 'resolve',
                src: 'resolveCalls',
                input: ({ context }) => resolveInput(context.run),
                onDone: { target: 'preflight', actions: 'applyResolutions' },
              },
            },
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
              invoke: {
                id: 'approval',
                src: 'wait',
                input: ({ context }) => approvalInput(context.run),
                onDone: [
                  { guard: 'approvalDenied', target: 'preflight', actions: ['recordDecision', 'rejectDenied'] },
                  // Approved with edited arguments that do not validate: an error result, never run.
                  { guard: 'editsInvalid', target: 'preflight', actions: ['recordDecision', 'rejectInvalidEdits'] },
                  { guard: 'currentCallRunsAlone', target: 'barrier', actions: ['recordDecision', 'applyEdits', 'claimApproved'] },
                  { guard: 'atCapacity', target: 'throttled', actions: ['recordDecision', 'applyEdits', 'holdApproved'] },
                  { target: 'preflight', actions: ['recordDecision', 'applyEdits', 'dispatchApproved'] },
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
              always: { guard: 'nothingInFlight', target: '#run.turn.turnEnd' },
              // The batch's last results: recorded and on to turnEnd in one step. Other results
              // (and a tool's RunCancelled) are the root's `tools.settled`.
              on: { 'tools.settled': { guard: 'lastResultsIn', target: '#run.turn.turnEnd', actions: 'recordResults' } },
            },
          },
        },
        // Where every turn ends, and the one place that decides what comes next.
        turnEnd: {
          // Safety net for "exactly one result": nothing should be open here.
          entry: 'closeUnfinishedCalls',
          always: [
            { guard: 'stopRequested', target: '#run.stopping' },
            { guard: 'spendOverBudget', target: '#run.stopping', actions: 'stopOverSpend' },
            // shouldStopAfterTurn hooks are asked once about the turn's results (before it is saved: a soft stop completes the run).
            { guard: 'stopAfterTurnUnasked', target: 'afterTurn' },
            // A durable turn is saved first, then decided (checkpoint comes back here).
            { guard: 'turnUnsaved', target: 'checkpoint' },
            // outputType: an invalid final reply gets one repair turn, then OutputValidationError.
            { guard: 'outputNeedsRepair', target: '#run.turn', reenter: true, actions: ['endTurn', 'queueRepair'] },
            { guard: 'outputInvalid', target: '#run.failed', actions: ['endTurn', 'failWithOutputError'] },
            // Output guardrails and onRunEnd hooks (whose messages continue the run).
            { guard: 'endChecksPending', target: '#run.ending', actions: 'endTurn' },
            { guard: 'runFinished', target: '#run.finishing', actions: 'endTurn' },
            { guard: 'handoffPending', target: 'handoff', actions: 'endTurn' },
            // Leaving and re-entering `turn` starts the next turn from checkLimits.
            { target: '#run.turn', reenter: true, actions: 'endTurn' },
          ],
        },
        // The soft stop (CubePi's shouldStopAfterTurn): its answer joins the runFinished rule.
        afterTurn: {
          invoke: {
            id: 'afterTurn',
            src: 'afterTurn',
            input: ({ context }) => stopAfterTurnInput(context.run),
            onDone: { target: 'turnEnd', actions: 'recordStopAfterTurn' },
            onError: { target: '#run.failed', actions: 'failWithAfterTurnError' },
          },
        },
        // Waits for the turn's writes (saveCheckpoint answers with a message: no actor per turn).
        checkpoint: {
          entry: 'saveCheckpoint',
          on: { 'checkpoint.saved': { target: 'turnEnd', actions: 'markTurnSaved' } },
        },
        handoff: {
          entry: 'applyHandoff',
          always: [{ guard: 'stopRequested', target: '#run.stopping' }, { target: '#run.turn', reenter: true }],
        },
      },
    },
    // Output guardrails, then onRunEnd hooks (whose messages continue the run).
    ending: {
      invoke: {
        id: 'runEnd',
        src: 'runEnd',
        input: ({ context }) => runEndInput(context.run),
        onDone: [{ guard: 'endHookContinues', target: 'turn', actions: 'queueEndMessages' }, { target: 'finishing' }],
        onError: { target: 'failed', actions: 'failWithEndError' },
      },
    },
    // Completed runs join their session before run_completed, so the next run sees them.
    finishing: { always: [{ guard: 'noSession', target: 'completed' }, { target: 'savingSession' }] },
    savingSession: {
      invoke: {
        id: 'session',
        src: 'session',
        input: ({ context }) => sessionInput(context.run),
        onDone: { target: 'completed' },
        onError: { target: 'failed', actions: 'failWithSessionError' },
      },
    },
    // Budget stop: calls that never ran get their result, in-flight calls finish and are saved.
    stopping: {
      entry: 'closeForStop',
      initial: 'draining',
      states: {
        draining: { always: { guard: 'nothingInFlight', target: 'saving' } },
        saving: { always: [{ guard: 'durable', target: 'checkpoint' }, { target: '#run.failed' }] },
        checkpoint: { entry: 'saveCheckpoint', on: { 'checkpoint.saved': { target: '#run.failed' } } },
      },
    },
    // Parked at a wait: the head is stored as "suspended" (the requests are logged already), then the lease is released.
    suspending: { entry: 'parkRun', on: { 'checkpoint.saved': { target: 'suspended' } } },
    // Every ending closes the run's set-up plugins (closePlugins: once each, last first).
    completed: { type: 'final', entry: ['emitCompleted', 'closePlugins'] },
    failed: { type: 'final', entry: ['emitFailed', 'closePlugins'] },
    cancelled: { type: 'final', entry: ['cancel', 'emitFailed', 'closePlugins'] },
    suspended: { type: 'final', entry: ['emitSuspended', 'closePlugins'] },
  },
});

export type RunMachine = typeof runMachine;
