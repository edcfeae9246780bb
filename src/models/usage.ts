import { ModelError } from '../errors.js';
import type { Usage } from '../types.js';

const USAGE_FIELDS = ['inputTokens', 'outputTokens', 'totalTokens', 'requests'] as const;

/**
 * The usage a model reported, checked: every field it gives must be a non-negative
 * integer, so a NaN, negative, fractional or string count can never slip past a budget.
 * A missing (undefined or null) field means "not reported". Unknown fields are dropped.
 * @throws ModelError naming the model, the field and the value.
 */
export function checkedUsage(usage: unknown, modelName: string): Partial<Usage> {
  if (usage === undefined || usage === null) return {};
  if (typeof usage !== 'object' || Array.isArray(usage)) {
    throw new ModelError(`Model '${modelName}' reported usage that is not an object: ${describe(usage)}.`);
  }
  const out: Partial<Usage> = {};
  for (const field of USAGE_FIELDS) {
    const value = (usage as Record<string, unknown>)[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      throw new ModelError(`Model '${modelName}' reported invalid usage: ${field} is ${describe(value)}; expected a non-negative integer.`);
    }
    out[field] = value;
  }
  return out;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  try {
    return `${Array.isArray(value) ? 'array' : typeof value} ${JSON.stringify(value)}`;
  } catch {
    return typeof value;
  }
}
