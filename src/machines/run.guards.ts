import type { ApprovalOutcome } from '../runtime/approvals.js';
import { currentSlot, cancelFromResults, editedArgs, settlesAllInFlight } from '../runtime/run-calls.js';
import { finishesAfterTurn, inputCheckPending, outputProblem, parkNow } from '../runtime/run-end.js';
import { hasHook } from '../runtime/run-hooks.js';
import type { ModelReply } from '../actors/model-turn.js';
import type { Agent } from '../agent.js';
import { needsLoading } from '../runtime/run-restore.js';
import type { RunState } from '../runtime/run-state.js';
import type { ToolsSettledEvent } from '../actors/tool-executor.js';
import { replyViolation, spendViolation, turnStartViolation } from '../rules/limits.js';
import { mustRunAlone } from '../rules/preflight.js';
import { hasCapacity } from '../rules/batch.js';

/** The run actor's context: one reference to the run's state record (XState never copies the transcript). */
export interface RunMachineContext {
  readonly run: RunState;
}

type GuardArgs = { context: RunMachineContext; event: { type: string } };

/**
 * Every rule that decides where a run goes, as a named pure guard: each reads the run state
 * (and the event) and calls a pure rule from src/rules. None changes anything.
 */
export const runGuards = {
  hasConfigError: ({ context }: GuardArgs) => context.run.configError !== undefined,
  needsLoading: ({ context }: GuardArgs) => needsLoading(context.run),
  cancelRequested: ({ context }: GuardArgs) => context.run.cancelError !== undefined,
  replayCompleted: ({ context }: GuardArgs) => context.run.replayCompleted,
  resumeInTurn: ({ context }: GuardArgs) => context.run.resumeInTurn,
  turnLimitReached: ({ context }: GuardArgs) => turnStartViolation(context.run, Date.now()) !== undefined,
  // START of a fresh run (not loading, no config error): no cancel came first and turn 1 may start.
  startsFirstTurn: ({ context }: GuardArgs) => context.run.cancelError === undefined && turnStartViolation(context.run, Date.now()) === undefined,
  replyOverBudget: ({ context }: GuardArgs) => replyViolation(context.run, Date.now()) !== undefined,
  noToolCalls: ({ context }: GuardArgs) => context.run.batch.slots.length === 0,
  approvalDenied: ({ event }: GuardArgs) => !(event as unknown as { output: ApprovalOutcome }).output.approved,
  editsInvalid: ({ context, event }: GuardArgs) => typeof editedArgs(context.run, (event as unknown as { output: ApprovalOutcome }).output) === 'string',
  currentCallRunsAlone: ({ context }: GuardArgs) => mustRunAlone(currentSlot(context.run).tool!, context.run.batch.sequential),
  nothingInFlight: ({ context }: GuardArgs) => context.run.inFlight === 0,
  hasCapacity: ({ context }: GuardArgs) => hasCapacity(context.run.inFlight, context.run.options.maxConcurrentToolCalls),
  atCapacity: ({ context }: GuardArgs) => !hasCapacity(context.run.inFlight, context.run.options.maxConcurrentToolCalls),
  resultsCancelRun: ({ event }: GuardArgs) => cancelFromResults((event as ToolsSettledEvent).results) !== undefined,
  // The last calls of the batch settled (and none cancels the run): draining ends in this step.
  lastResultsIn: ({ context, event }: GuardArgs) => {
    const { results } = event as ToolsSettledEvent;
    return cancelFromResults(results) === undefined && settlesAllInFlight(context.run, results);
  },
  stopRequested: ({ context }: GuardArgs) => context.run.stopError !== undefined,
  spendOverBudget: ({ context }: GuardArgs) => spendViolation(context.run) !== undefined,
  checkpointing: ({ context }: GuardArgs) => context.run.options.checkpoint !== undefined,
  runFinished: ({ context }: GuardArgs) => finishesAfterTurn(context.run),
  // The run completes after this turn with nothing to check or save first (no outputType,
  // no output guardrails or onRunEnd hooks, input guardrails decided, no session).
  completesNow: ({ context }: GuardArgs) => {
    const run = context.run;
    return run.options.session === undefined && run.agent.outputType === undefined && !hasEndChecks(run.agent) && !inputCheckPending(run) && finishesAfterTurn(run);
  },
  replyRetried: ({ event }: GuardArgs) => {
    const verdict = (event as unknown as { output: ModelReply }).output.verdict;
    return verdict !== undefined && 'retry' in verdict;
  },
  replyStops: ({ context }: GuardArgs) => context.run.batch.stopped,
  // A reply with calls and no afterModelResponse verdict, in a run with no budget of its own or
  // above it: replyOverBudget, replyStops and noToolCalls are all false once it is recorded.
  replyDispatches: ({ context, event }: GuardArgs) => {
    const reply = (event as unknown as { output: ModelReply }).output;
    return reply.verdict === undefined && reply.calls.length > 0 && context.run.budget === undefined && context.run.ancestors.length === 0;
  },
  // The same without calls: once recorded, `replied` would go on to afterTools (noToolCalls).
  replyEndsTurn: ({ context, event }: GuardArgs) => {
    const reply = (event as unknown as { output: ModelReply }).output;
    return reply.verdict === undefined && reply.calls.length === 0 && context.run.budget === undefined && context.run.ancestors.length === 0;
  },
  outputNeedsRepair: ({ context }: GuardArgs) => !context.run.repairUsed && outputProblem(context.run) !== undefined,
  outputInvalid: ({ context }: GuardArgs) => context.run.repairUsed && outputProblem(context.run) !== undefined,
  endChecksPending: ({ context }: GuardArgs) => finishesAfterTurn(context.run) && (hasEndChecks(context.run.agent) || inputCheckPending(context.run)),
  // onRunEnd returned messages, or a steer / follow-up arrived while the end checks ran: nothing queued is lost.
  endHookContinues: ({ context, event }: GuardArgs) =>
    (event as unknown as { output: string[] }).output.length > 0 || context.run.inbox.length + context.run.steerQueue.length + context.run.followUps.length > 0,
  handoffPending: ({ context }: GuardArgs) => context.run.pendingHandoff !== undefined,
  noSession: ({ context }: GuardArgs) => context.run.options.session === undefined,
  parkNow: ({ context }: GuardArgs) => parkNow(context.run),
};

export type RunGuardName = keyof typeof runGuards;

/** Output guardrails or onRunEnd hooks must run before a run may complete. */
function hasEndChecks(agent: Agent): boolean {
  return agent.outputGuardrails.length > 0 || hasHook(agent, 'onRunEnd');
}
