import { BudgetExceeded } from '../errors.js';
import type { Budget, Usage } from '../types.js';

/** Token and duration limits, checked at turn start and after each model reply. */
export function usageOverBudget(budget: Budget | undefined, usage: Usage, elapsedMs: number): BudgetExceeded | undefined {
  return tokensOverBudget(budget, usage) ?? durationOverBudget(budget, elapsedMs);
}

export function tokensOverBudget(budget: Budget | undefined, usage: Usage): BudgetExceeded | undefined {
  if (!budget) return undefined;
  if (budget.maxInputTokens !== undefined && usage.inputTokens > budget.maxInputTokens) {
    return new BudgetExceeded('inputTokens', usage.inputTokens, budget.maxInputTokens);
  }
  if (budget.maxOutputTokens !== undefined && usage.outputTokens > budget.maxOutputTokens) {
    return new BudgetExceeded('outputTokens', usage.outputTokens, budget.maxOutputTokens);
  }
  if (budget.maxTotalTokens !== undefined && usage.totalTokens > budget.maxTotalTokens) {
    return new BudgetExceeded('totalTokens', usage.totalTokens, budget.maxTotalTokens);
  }
  return undefined;
}

export function durationOverBudget(budget: Budget | undefined, elapsedMs: number): BudgetExceeded | undefined {
  if (budget?.maxDurationMs !== undefined && elapsedMs > budget.maxDurationMs) {
    return new BudgetExceeded('durationMs', Math.round(elapsedMs), budget.maxDurationMs);
  }
  return undefined;
}

/** Counted per call in preflight: the call that makes `count > max` fails the run. */
export function toolCallsOverBudget(budget: Budget | undefined, count: number): BudgetExceeded | undefined {
  if (budget?.maxToolCalls !== undefined && count > budget.maxToolCalls) {
    return new BudgetExceeded('toolCalls', count, budget.maxToolCalls);
  }
  return undefined;
}

/**
 * What a sub-run knows of one ancestor's budget: a copy of the ancestor's limits and spend,
 * given in the sub-run's input and kept current by `child.spend` / `ancestor.spend` messages.
 */
export interface AncestorBudget {
  readonly runId: string;
  readonly budget: Budget | undefined;
  readonly startedAt: number;
  usage: Usage;
  toolCalls: number;
}

/**
 * The first exhausted budget among a run's ancestors (parent first, up to the root): a
 * sub-run's limit is never above what any ancestor has left.
 */
export function ancestorOverBudget(ancestors: readonly AncestorBudget[], now: number): BudgetExceeded | undefined {
  for (const ancestor of ancestors) {
    const over = usageOverBudget(ancestor.budget, ancestor.usage, now - ancestor.startedAt) ?? toolCallsOverBudget(ancestor.budget, ancestor.toolCalls);
    if (over) return over;
  }
  return undefined;
}
