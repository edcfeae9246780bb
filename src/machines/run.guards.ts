import { assertEvent } from 'xstate';
import { approvalOutcome, editedArgs } from '../runtime/run-approvals.js';
import { cancelFromResults, currentSlot, settlesAllInFlight } from '../runtime/run-calls.js';
import { finishesAfterTurn, inputCheckPending, outputProblem } from '../runtime/run-end.js';
import { parkNow } from '../runtime/run-park.js';
import { pluginsUnset } from '../runtime/run-plugins.js';
import { hasHook, type HookSet } from '../runtime/run-hooks.js';
import { needsLoading } from '../runtime/run-restore.js';
import type { RunState } from '../runtime/run-state.js';
import { replyViolationAfter } from '../runtime/run-spend.js';
import { hasCapacity } from '../rules/batch.js';
import { spendViolation, turnStartViolation } from '../rules/limits.js';
import { mustRunAlone } from '../rules/preflight.js';
import type { RunMachineEvent } from './run-events.js';

/**
 * The run actor's context: one reference to the run's state record. XState never copies it
 * (the transcript grows by push; a turn costs the same at turn 200), and only the chart's
 * actions (run.actions.ts) change it.
 */
export interface RunMachineContext {
  readonly run: RunState;
}

/** What a guard is given: the context and the event, typed; guards narrow the event with `assertEvent`. */
export interface RunGuardArgs {
  readonly context: RunMachineContext;
  readonly event: RunMachineEvent;
}

/**
 * Every rule that decides where a run goes, as a named pure guard (docs/architecture.md, "The
 * chart"): each reads the run state and the event and calls a pure rule from src/rules or a
 * pure view of the run state. None changes anything.
 */
export const runGuards = {
  // ── starting ──
  hasConfigError: ({ context }: RunGuardArgs) => context.run.configError !== undefined,
  needsLoading: ({ context }: RunGuardArgs) => needsLoading(context.run),
  cancelRequested: ({ context }: RunGuardArgs) => context.run.cancelError !== undefined,
  replayCompleted: ({ context }: RunGuardArgs) => context.run.replayCompleted,
  resumeInTurn: ({ context }: RunGuardArgs) => context.run.resumeInTurn,
  // The stored open turn's calls without a result are offered to resolveToolCall hooks again before preflight.
  resumeInTurnUnresolved: ({ context }: RunGuardArgs) => context.run.resumeInTurn && !context.run.batch.resolved,
  // ── a turn ──
  turnLimitReached: ({ context }: RunGuardArgs) => turnStartViolation(context.run, Date.now()) !== undefined,
  pluginsUnset: ({ context }: RunGuardArgs) => pluginsUnset(context.run),
  replyRetried: ({ event }: RunGuardArgs) => {
    assertEvent(event, 'model.replied');
    const verdict = event.output.verdict;
    return verdict !== undefined && 'retry' in verdict;
  },
  replyOverBudget: ({ context, event }: RunGuardArgs) => {
    assertEvent(event, 'model.replied');
    return replyViolationAfter(context.run, event.output, Date.now()) !== undefined;
  },
  replyStops: ({ event }: RunGuardArgs) => {
    assertEvent(event, 'model.replied');
    const verdict = event.output.verdict;
    return verdict !== undefined && 'stop' in verdict;
  },
  noToolCalls: ({ event }: RunGuardArgs) => {
    assertEvent(event, 'model.replied');
    return event.output.calls.length === 0;
  },
  // The active agent or one of its plugins has resolveToolCall hooks: the reply's calls are resolved before preflight (the resolving step).
  replyNeedsResolving: ({ context }: RunGuardArgs) => hasHook(context.run.hookSet, 'resolveToolCall'),
  // ── the tool-call phase ──
  approvalDenied: ({ event }: RunGuardArgs) => {
    assertEvent(event, 'xstate.done.actor.approval');
    return !approvalOutcome(event.output).approved;
  },
  editsInvalid: ({ context, event }: RunGuardArgs) => {
    assertEvent(event, 'xstate.done.actor.approval');
    return typeof editedArgs(context.run, approvalOutcome(event.output)) === 'string';
  },
  currentCallRunsAlone: ({ context }: RunGuardArgs) => mustRunAlone(currentSlot(context.run).tool!, context.run.batch.sequential),
  nothingInFlight: ({ context }: RunGuardArgs) => context.run.inFlight === 0,
  hasCapacity: ({ context }: RunGuardArgs) => hasCapacity(context.run.inFlight, context.run.options.maxConcurrentToolCalls),
  atCapacity: ({ context }: RunGuardArgs) => !hasCapacity(context.run.inFlight, context.run.options.maxConcurrentToolCalls),
  resultsCancelRun: ({ event }: RunGuardArgs) => {
    assertEvent(event, 'tools.settled');
    return cancelFromResults(event.results) !== undefined;
  },
  // The last calls of the batch settled (and none cancels the run): the turn's tool phase ends in this step.
  lastResultsIn: ({ context, event }: RunGuardArgs) => {
    assertEvent(event, 'tools.settled');
    return cancelFromResults(event.results) === undefined && settlesAllInFlight(context.run, event.results);
  },
  parkNow: ({ context }: RunGuardArgs) => parkNow(context.run),
  // ── the end of a turn ──
  stopRequested: ({ context }: RunGuardArgs) => context.run.stopError !== undefined,
  // shouldStopAfterTurn hooks (a soft stop) have not yet been asked about this turn's results.
  stopAfterTurnUnasked: ({ context }: RunGuardArgs) => {
    const { batch, hookSet } = context.run;
    return batch.stopAfterTurn === undefined && !batch.stopped && batch.reply !== undefined && batch.reply.toolCalls.length > 0 && hasHook(hookSet, 'shouldStopAfterTurn');
  },
  spendOverBudget: ({ context }: RunGuardArgs) => spendViolation(context.run) !== undefined,
  turnUnsaved: ({ context }: RunGuardArgs) => context.run.runLog !== undefined && !context.run.turnSaved,
  outputNeedsRepair: ({ context }: RunGuardArgs) => !context.run.repairUsed && outputProblem(context.run) !== undefined,
  outputInvalid: ({ context }: RunGuardArgs) => context.run.repairUsed && outputProblem(context.run) !== undefined,
  endChecksPending: ({ context }: RunGuardArgs) => finishesAfterTurn(context.run) && (hasEndChecks(context.run.hookSet) || inputCheckPending(context.run)),
  runFinished: ({ context }: RunGuardArgs) => finishesAfterTurn(context.run),
  handoffPending: ({ context }: RunGuardArgs) => context.run.pendingHandoff !== undefined,
  // onRunEnd returned messages, or a steer / follow-up arrived while the end checks ran: nothing queued is lost.
  endHookContinues: ({ context, event }: RunGuardArgs) => {
    assertEvent(event, 'xstate.done.actor.runEnd');
    const run = context.run;
    return event.output.length > 0 || run.inbox.length + run.steerQueue.length + run.followUps.length > 0;
  },
  noSession: ({ context }: RunGuardArgs) => context.run.options.session === undefined,
  /** The run keeps a log (a checkpoint store): a stopped run saves before it fails. */
  durable: ({ context }: RunGuardArgs) => context.run.runLog !== undefined,
};

export type RunGuardName = keyof typeof runGuards;

/** Output guardrails or onRunEnd hooks must run before a run may complete. */
function hasEndChecks(agent: HookSet): boolean {
  return agent.outputGuardrails.length > 0 || hasHook(agent, 'onRunEnd');
}
