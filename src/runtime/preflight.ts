import { InvalidToolArguments } from '../errors.js';
import { formatToolError } from '../tools/render.js';
import { isObject } from '../tools/schema.js';
import type { Tool } from '../tools/tool.js';
import { validateArguments } from '../tools/validate.js';
import type { ToolCallRequest } from '../types.js';

export type PreflightVerdict =
  | { readonly ok: true; readonly tool: Tool; readonly raw: Record<string, unknown>; readonly args: unknown }
  | { readonly ok: false; readonly output: string; readonly error: Error };

export const handoffRejection = (target: string): string =>
  `Handoff not performed: this turn already transferred to '${target}'. Only the first handoff in a turn takes effect.`;

/**
 * The per-call checks after the budget count, in the order DESIGN.md fixes:
 * tool lookup → handoff dedup → JSON parse → object check → schema validation.
 * Approval is decided by the run statechart afterwards.
 */
export function checkCall(call: ToolCallRequest, tools: ReadonlyMap<string, Tool>, claimedHandoff: string | undefined): PreflightVerdict {
  const found = tools.get(call.name);
  if (!found) {
    const names = [...tools.keys()];
    return reject(
      new InvalidToolArguments(
        `unknown tool '${call.name}'. Available tools: ${names.length ? names.join(', ') : '(none)'}.`,
      ),
    );
  }
  if (found.handoff && claimedHandoff !== undefined) {
    const error = new InvalidToolArguments(handoffRejection(claimedHandoff));
    return { ok: false, output: error.message, error };
  }
  let raw: unknown;
  const text = call.arguments.trim();
  try {
    // Some providers send "" for a call without arguments.
    raw = text === '' ? {} : JSON.parse(text);
  } catch (error) {
    return reject(new InvalidToolArguments(`arguments for tool '${call.name}' are not valid JSON: ${(error as Error).message}`));
  }
  if (!isObject(raw)) {
    return reject(new InvalidToolArguments(`arguments for tool '${call.name}' must be a JSON object, got ${describe(raw)}.`));
  }
  try {
    return { ok: true, tool: found, raw, args: validateArguments(found, raw) };
  } catch (error) {
    return reject(error as Error);
  }
}

function reject(error: Error): PreflightVerdict {
  return { ok: false, output: formatToolError(error), error };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
