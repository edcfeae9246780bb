import { setup, type AnyActorLogic } from 'xstate';

/**
 * The run statechart. Pure: every guard, action and actor is named here and implemented
 * outside (src/actors/run-implementation.ts), so the chart can be drawn, traversed and
 * tested without I/O.
 *
 * turn = checkLimits → model → replied → executing[preflight ⇄ approvalWait / barrier → draining]
 *        → afterTools → checkpoint → turnEnd → next turn | completed
 * terminal: completed, failed, cancelled (cancel reports run_failed(RunCancelled)).
 */

export const RUN_GUARDS = [
  'hasConfigError',
  'cancelRequested',
  'turnLimitReached',
  'replyOverBudget',
  'noToolCalls',
  'haltedForStop',
  'haltedForCancel',
  'haltedForApproval',
  'haltedToRunAlone',
  'nothingInFlight',
  'stopRequested',
  'checkpointing',
  'finished',
  'handoffPending',
  'spendOverBudget',
  'replayCompleted',
  'resumeInTurn',
  'needsLoading',
  'noSession',
] as const;

export const RUN_ACTIONS = [
  'failWithConfigError',
  'startRun',
  'failWithTurnLimit',
  'startTurn',
  'recordReply',
  'failWithModelError',
  'runPreflight',
  'applyApproval',
  'dispatchAlone',
  'closeForStop',
  'closeUnfinishedCalls',
  'endTurn',
  'applyHandoff',
  'cancel',
  'failWithCheckpointError',
  'emitCompleted',
  'emitFailed',
  'foldChildSpend',
  'failWithRestoreError',
  'failWithSessionError',
] as const;

export type RunGuardName = (typeof RUN_GUARDS)[number];
export type RunActionName = (typeof RUN_ACTIONS)[number];

export interface RunMachineImplementation {
  guards: Record<RunGuardName, (args: { context: RunMachineContext; event: any }) => boolean>;
  actions: Record<RunActionName, (args: { context: RunMachineContext; event: any }) => void>;
  actors: { modelTurn: AnyActorLogic; approval: AnyActorLogic; checkpoint: AnyActorLogic; restore: AnyActorLogic; sessionSave: AnyActorLogic; toolExecutor: AnyActorLogic };
  inputs: {
    sessionSave(context: RunMachineContext): unknown;
    restore(context: RunMachineContext): unknown;
    modelTurn(context: RunMachineContext): unknown;
    approval(context: RunMachineContext): unknown;
    checkpoint(context: RunMachineContext): unknown;
    toolExecutor(context: RunMachineContext): unknown;
  };
}

/** The context holds one reference to the run's mutable state; XState never copies the transcript. */
export interface RunMachineContext {
  readonly run: unknown;
}

export function createRunMachine(impl: RunMachineImplementation) {
  return setup({
    types: {} as { context: RunMachineContext; input: { run: unknown }; events: { type: string; [key: string]: unknown } },
    guards: impl.guards,
    actions: impl.actions,
    actors: impl.actors,
  }).createMachine({
    id: 'run',
    context: ({ input }) => ({ run: input.run }),
    // Waits for START so the first steps run in a started actor: in XState's initial
    // macrostep, invoked actors start before deferred entry actions run.
    initial: 'idle',
    // Lives for the whole run: hosts one child actor per tool call.
    invoke: { id: 'tools', src: 'toolExecutor', input: ({ context }: { context: RunMachineContext }) => impl.inputs.toolExecutor(context) },
    on: {
      CANCEL: { target: '.cancelled' },
      // A sub-run (agent as tool) reports what it spent; it counts against this run's budget.
      'child.spend': { actions: 'foldChildSpend' },
    },
    states: {
      idle: {
        on: {
          START: [
            { guard: 'hasConfigError', target: 'starting' },
            { guard: 'needsLoading', target: 'restoring' },
            { target: 'starting' },
          ],
        },
      },
      // Durable runs and sessions: load the history and the stored log before the first step.
      restoring: {
        invoke: {
          id: 'restore',
          src: 'restore',
          input: ({ context }: { context: RunMachineContext }) => impl.inputs.restore(context),
          onDone: { target: 'starting' },
          onError: { target: 'failed', actions: 'failWithRestoreError' },
        },
      },
      starting: {
        entry: 'startRun',
        always: [
          { guard: 'hasConfigError', target: 'failed', actions: 'failWithConfigError' },
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
            always: [
              { guard: 'cancelRequested', target: '#run.cancelled' },
              { guard: 'turnLimitReached', target: '#run.failed', actions: 'failWithTurnLimit' },
              { target: 'model', actions: 'startTurn' },
            ],
          },
          model: {
            invoke: {
              id: 'model',
              src: 'modelTurn',
              input: ({ context }: { context: RunMachineContext }) => impl.inputs.modelTurn(context),
              onDone: { target: 'replied', actions: 'recordReply' },
              onError: { target: '#run.failed', actions: 'failWithModelError' },
            },
          },
          replied: {
            always: [
              { guard: 'replyOverBudget', target: '#run.stopping' },
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
                entry: 'runPreflight',
                always: [
                  { guard: 'haltedForCancel', target: '#run.cancelled' },
                  { guard: 'haltedForStop', target: '#run.stopping' },
                  { guard: 'haltedForApproval', target: 'approvalWait' },
                  { guard: 'haltedToRunAlone', target: 'barrier' },
                  { target: 'draining' },
                ],
              },
              approvalWait: {
                invoke: {
                  id: 'approval',
                  src: 'approval',
                  input: ({ context }: { context: RunMachineContext }) => impl.inputs.approval(context),
                  onDone: { target: 'approvalDecided', actions: 'applyApproval' },
                },
              },
              approvalDecided: {
                always: [{ guard: 'haltedToRunAlone', target: 'barrier' }, { target: 'preflight' }],
              },
              barrier: {
                initial: 'waitingForInFlight',
                states: {
                  waitingForInFlight: {
                    always: { guard: 'nothingInFlight', target: 'runningAlone' },
                    on: { 'tools.idle': { guard: 'nothingInFlight', target: 'runningAlone' } },
                  },
                  runningAlone: {
                    entry: 'dispatchAlone',
                    always: { guard: 'nothingInFlight', target: '#run.turn.executing.preflight' },
                    on: { 'tools.idle': { guard: 'nothingInFlight', target: '#run.turn.executing.preflight' } },
                  },
                },
              },
              draining: {
                always: { guard: 'nothingInFlight', target: '#run.turn.afterTools' },
                on: { 'tools.idle': { guard: 'nothingInFlight', target: '#run.turn.afterTools' } },
              },
            },
          },
          afterTools: {
            // Safety net for "exactly one result": nothing should be open here.
            entry: 'closeUnfinishedCalls',
            always: [
              { guard: 'cancelRequested', target: '#run.cancelled' },
              { guard: 'stopRequested', target: '#run.stopping' },
              { guard: 'spendOverBudget', target: '#run.stopping' },
              { guard: 'checkpointing', target: 'checkpoint' },
              { target: 'turnEnd' },
            ],
          },
          checkpoint: {
            invoke: {
              id: 'checkpoint',
              src: 'checkpoint',
              input: ({ context }: { context: RunMachineContext }) => impl.inputs.checkpoint(context),
              onDone: { target: 'turnEnd' },
              onError: { target: '#run.failed', actions: 'failWithCheckpointError' },
            },
          },
          turnEnd: {
            entry: 'endTurn',
            always: [
              { guard: 'finished', target: '#run.finishing' },
              { guard: 'handoffPending', target: 'handoff' },
              { target: 'next' },
            ],
          },
          handoff: {
            entry: 'applyHandoff',
            always: [{ guard: 'stopRequested', target: '#run.stopping' }, { target: 'next' }],
          },
          // Leaving and re-entering `turn` starts the next turn from checkLimits.
          next: { always: { target: '#run.turn', reenter: true } },
        },
      },
      // Budget stop: calls that never ran get their result, in-flight calls finish and are saved.
      stopping: {
        entry: 'closeForStop',
        initial: 'draining',
        states: {
          draining: {
            always: { guard: 'nothingInFlight', target: 'saving' },
            on: { 'tools.idle': { guard: 'nothingInFlight', target: 'saving' } },
          },
          saving: {
            always: [{ guard: 'checkpointing', target: 'checkpoint' }, { target: '#run.failed' }],
          },
          checkpoint: {
            invoke: {
              id: 'checkpoint',
              src: 'checkpoint',
              input: ({ context }: { context: RunMachineContext }) => impl.inputs.checkpoint(context),
              onDone: { target: '#run.failed' },
              onError: { target: '#run.failed', actions: 'failWithCheckpointError' },
            },
          },
        },
      },
      // Completed runs join their session before run_completed, so the next run sees them.
      finishing: {
        always: [{ guard: 'noSession', target: 'completed' }, { target: 'savingSession' }],
      },
      savingSession: {
        invoke: {
          id: 'session',
          src: 'sessionSave',
          input: ({ context }: { context: RunMachineContext }) => impl.inputs.sessionSave(context),
          onDone: { target: 'completed' },
          onError: { target: 'failed', actions: 'failWithSessionError' },
        },
      },
      completed: { type: 'final', entry: 'emitCompleted' },
      failed: { type: 'final', entry: 'emitFailed' },
      cancelled: { type: 'final', entry: ['cancel', 'emitFailed'] },
    },
  });
}

export type RunMachine = ReturnType<typeof createRunMachine>;
