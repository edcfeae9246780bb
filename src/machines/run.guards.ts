import type { ApprovalOutcome } from '../runtime/approvals.js';
import { currentSlot, cancelFromResults } from '../runtime/run-calls.js';
import { finishesAfterTurn } from '../runtime/run-end.js';
import { needsLoading } from '../runtime/run-restore.js';
import type { RunState } from '../runtime/run-state.js';
import type { ToolsSettledEvent } from '../actors/tool-executor.js';
import { replyViolation, spendViolation, turnStartViolation } from '../rules/limits.js';
import { mustRunAlone } from '../rules/preflight.js';

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
  replyOverBudget: ({ context }: GuardArgs) => replyViolation(context.run, Date.now()) !== undefined,
  noToolCalls: ({ context }: GuardArgs) => context.run.batch.slots.length === 0,
  approvalDenied: ({ event }: GuardArgs) => !(event as unknown as { output: ApprovalOutcome }).output.approved,
  currentCallRunsAlone: ({ context }: GuardArgs) => mustRunAlone(currentSlot(context.run).tool!, context.run.batch.sequential),
  nothingInFlight: ({ context }: GuardArgs) => context.run.inFlight === 0,
  resultsCancelRun: ({ event }: GuardArgs) => cancelFromResults((event as ToolsSettledEvent).results) !== undefined,
  stopRequested: ({ context }: GuardArgs) => context.run.stopError !== undefined,
  spendOverBudget: ({ context }: GuardArgs) => spendViolation(context.run) !== undefined,
  checkpointing: ({ context }: GuardArgs) => context.run.options.checkpoint !== undefined,
  runFinished: ({ context }: GuardArgs) => finishesAfterTurn(context.run),
  handoffPending: ({ context }: GuardArgs) => context.run.pendingHandoff !== undefined,
  noSession: ({ context }: GuardArgs) => context.run.options.session === undefined,
};

export type RunGuardName = keyof typeof runGuards;
