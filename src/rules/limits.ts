import { MaxTurnsExceeded, type BudgetExceeded } from '../errors.js';
import type { Budget, Usage } from '../types.js';
import { ancestorOverBudget, tokensOverBudget, toolCallsOverBudget, usageOverBudget, type AncestorBudget } from './budget.js';

/** What the run-level limit rules read. */
export interface LimitsView {
  readonly turn: number;
  readonly maxTurns: number;
  readonly budget: Budget | undefined;
  readonly usage: Usage;
  readonly toolCallCount: number;
  readonly startedAt: number;
  readonly ancestors: readonly AncestorBudget[];
}

/** Checked before a turn starts: the turn limit, then tokens and duration, then every ancestor's remainder. */
export function turnStartViolation(run: LimitsView, now: number): MaxTurnsExceeded | BudgetExceeded | undefined {
  if (run.turn + 1 > run.maxTurns) return new MaxTurnsExceeded(run.maxTurns);
  return replyViolation(run, now);
}

/** Checked after each model reply: tokens and duration, then every ancestor's remainder. */
export function replyViolation(run: LimitsView, now: number): BudgetExceeded | undefined {
  return usageOverBudget(run.budget, run.usage, now - run.startedAt) ?? ancestorOverBudget(run.ancestors, now);
}

/** Checked after each batch: a sub-run's folded spend (tokens, tool calls) may have exhausted this run's budget. */
export function spendViolation(run: LimitsView): BudgetExceeded | undefined {
  return tokensOverBudget(run.budget, run.usage) ?? toolCallsOverBudget(run.budget, run.toolCallCount);
}
