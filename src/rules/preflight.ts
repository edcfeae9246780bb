import { InvalidToolArguments, type BudgetExceeded } from '../errors.js';
import { formatToolError } from '../tools/render.js';
import { isObject } from '../tools/schema.js';
import { isExposed, type Tool } from '../tools/tool.js';
import { validateArguments } from '../tools/validate.js';
import type { ToolCallRequest } from '../types.js';

export type PreflightVerdict =
  | { readonly ok: true; readonly tool: Tool; readonly raw: Record<string, unknown>; readonly args: unknown }
  | { readonly ok: false; readonly output: string; readonly error: Error };

export const handoffRejection = (target: string): string =>
  `Handoff not performed: this turn already transferred to '${target}'. Only the first handoff in a turn takes effect.`;

/** What preflight does with one call once it has been counted against the budget. */
export type CallVerdict =
  /** Over a budget: the call gets this error result and the run stops. */
  | { readonly kind: 'overBudget'; readonly error: BudgetExceeded }
  /** Fails a check: the call gets this error result (no tool_call_started) and preflight goes on. */
  | { readonly kind: 'reject'; readonly output: string }
  /** Cleared, but the chart must ask for an approval first (approvalWait). */
  | { readonly kind: 'approval'; readonly cleared: ClearedCall }
  /** Cleared, and must wait for in-flight calls and run alone (barrier). */
  | { readonly kind: 'alone'; readonly cleared: ClearedCall }
  /** Cleared: dispatch it now, next to the calls in flight. */
  | { readonly kind: 'dispatch'; readonly cleared: ClearedCall };

export interface ClearedCall {
  readonly tool: Tool;
  readonly raw: Record<string, unknown>;
  readonly args: unknown;
}

/** Everything the verdict of one call depends on. */
export interface VerdictInput {
  readonly call: ToolCallRequest;
  readonly tools: ReadonlyMap<string, Tool>;
  readonly claimedHandoff: string | undefined;
  readonly sequentialBatch: boolean;
  /** The first exhausted budget after counting this call (own count, duration, ancestors), if any. */
  readonly overBudget: BudgetExceeded | undefined;
  /** The agent has beforeToolCall hooks: every call goes through the approval step, where they run first. */
  readonly hooked?: boolean;
  /** The reply stopped at the output token limit (finish reason `length`): arguments that do not parse were cut off. */
  readonly cutOff?: boolean;
  /** A resolveToolCall hook resolved the call: it may name a hidden tool, and a validation error shows the tool's full schema. */
  readonly resolved?: boolean;
}

/** Why a call whose arguments the output token limit cut off (finish reason `length`) was not run; its result is "Tool error: " + this. */
export const cutOffRejection = (tool: string): string =>
  `the call to '${tool}' was cut off by the output token limit before its arguments were complete; it was not run. Send it again with shorter arguments, or split the work over several calls.`;

/**
 * The preflight verdict of one call, in the order docs/architecture.md, "Preflight", gives: budget → tool lookup →
 * handoff dedup → JSON parse → object check → schema validation → approval → barrier.
 * Pure: the run chart's actions apply it.
 */
export function callVerdict(input: VerdictInput): CallVerdict {
  if (input.overBudget) return { kind: 'overBudget', error: input.overBudget };
  const checked = checkCall(input.call, input.tools, input.claimedHandoff, input.cutOff === true, input.resolved === true);
  if (!checked.ok) return { kind: 'reject', output: checked.output };
  const cleared: ClearedCall = { tool: checked.tool, raw: checked.raw, args: checked.args };
  if (checked.tool.needsApproval !== false || input.hooked) return { kind: 'approval', cleared };
  return { kind: mustRunAlone(checked.tool, input.sequentialBatch) ? 'alone' : 'dispatch', cleared };
}

/** Barrier rule: a `parallel: false` tool, any handoff, or any call of a sequential batch waits for in-flight calls and runs alone. */
export function mustRunAlone(tool: Tool, sequentialBatch: boolean): boolean {
  return !tool.parallel || tool.handoff !== undefined || sequentialBatch;
}

/**
 * The per-call checks after the budget count, in the order docs/architecture.md, "Preflight", gives:
 * tool lookup → handoff dedup → JSON parse (or, after a `length` finish, the cut-off
 * result) → object check → schema validation. Approval is decided by the run statechart afterwards.
 */
export function checkCall(call: ToolCallRequest, tools: ReadonlyMap<string, Tool>, claimedHandoff: string | undefined, cutOff = false, resolved = false): PreflightVerdict {
  const found = tools.get(call.name);
  // A hidden tool (exposeToModel: false) is unknown to the model: only a resolved call reaches it.
  if (!found || (!resolved && !isExposed(found))) {
    const names = [...tools.values()].filter(isExposed).map((t) => t.name);
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
    if (cutOff) return reject(new InvalidToolArguments(cutOffRejection(call.name)));
    return reject(new InvalidToolArguments(`arguments for tool '${call.name}' are not valid JSON: ${(error as Error).message}`));
  }
  if (!isObject(raw)) {
    return reject(new InvalidToolArguments(`arguments for tool '${call.name}' must be a JSON object, got ${describe(raw)}.`));
  }
  try {
    return { ok: true, tool: found, raw, args: validateArguments(found, raw) };
  } catch (error) {
    if (!resolved) return reject(error as Error);
    // The model never saw a resolved tool's schema (CubePi): it gets it with the error, to correct the call in one round trip.
    return { ok: false, output: `${formatToolError(error)}\n\n${fullSchemaText(found)}`, error: error as Error };
  }
}

/** What a resolved call's validation error adds: the resolved tool's full JSON Schema. */
export function fullSchemaText(tool: Tool): string {
  return `Full schema for '${tool.name}':\n${JSON.stringify(tool.jsonSchema)}`;
}

function reject(error: Error): PreflightVerdict {
  return { ok: false, output: formatToolError(error), error };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
