import { UserError } from '../errors.js';
import type { RunOptions } from './run-core.js';

const BUDGET_KEYS = ['maxInputTokens', 'maxOutputTokens', 'maxTotalTokens', 'maxToolCalls', 'maxDurationMs'] as const;

/** Rejects bad run input and options up front, so a typo fails the run clearly instead of silently disabling a limit. */
export function validateRunOptions(input: unknown, options: RunOptions): void {
  if (typeof input !== 'string') throw new UserError(`Run input must be a string, got ${input === null ? 'null' : typeof input}.`);
  if (options.maxTurns !== undefined && (!Number.isInteger(options.maxTurns) || options.maxTurns < 1)) {
    throw new UserError(`maxTurns must be a positive integer, got ${String(options.maxTurns)}.`);
  }
  if (options.approvalTimeoutMs !== undefined && !(Number.isFinite(options.approvalTimeoutMs) && options.approvalTimeoutMs >= 0)) {
    throw new UserError(`approvalTimeoutMs must be a non-negative number, got ${String(options.approvalTimeoutMs)}.`);
  }
  const budget = options.budget;
  if (budget === undefined) return;
  for (const key of Object.keys(budget)) {
    if (!(BUDGET_KEYS as readonly string[]).includes(key)) throw new UserError(`Unknown budget field '${key}'; expected one of ${BUDGET_KEYS.join(', ')}.`);
    const value = (budget as Record<string, unknown>)[key];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      throw new UserError(`Budget field '${key}' must be a non-negative number, got ${String(value)}.`);
    }
  }
}
