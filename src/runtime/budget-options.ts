import { UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import type { Budget } from '../types.js';

const BUDGET_KEYS = optionKeys<Budget>({ maxInputTokens: true, maxOutputTokens: true, maxTotalTokens: true, maxToolCalls: true, maxDurationMs: true });

/** A budget (run option, `agent.asTool`) a person wrote. @throws UserError for unknown or non-numeric budget fields. */
export function checkBudget(budget: Budget): void {
  checkOptionKeys(budget, BUDGET_KEYS, 'budget', 'field');
  for (const key of Object.keys(budget)) {
    const value = (budget as Record<string, unknown>)[key];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      throw new UserError(`Budget field '${key}' must be a non-negative number, got ${String(value)}.`);
    }
  }
}
