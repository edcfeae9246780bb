import type { ToolCallRequest, Usage } from '../types.js';
import type { ModelRequest } from './model.js';

/**
 * The replies a ScriptedModel gives, as data. Kept apart from the ScriptedModel class so
 * that the root entry's deprecated aliases of `text`, `call` and `batch` load no test double.
 */

/** One scripted assistant reply. */
export interface ScriptStep {
  readonly text: string;
  readonly reasoning?: string;
  readonly calls: readonly ToolCallRequest[];
  /** Fixed usage for this reply; by default about one token per four characters. */
  readonly usage?: Partial<Usage>;
  /** Build the reply from the request (e.g. echo a tool result). Overrides text and calls. */
  readonly respond?: (request: ModelRequest) => { text?: string; calls?: readonly ToolCallRequest[] };
}

type StepOptions = { usage?: Partial<Usage>; reasoning?: string };

/** A reply with text only: the run completes with it. */
export function text(content: string, options: StepOptions = {}): ScriptStep {
  return { text: content, calls: [], ...options };
}

let autoCallId = 0;

/** A reply with one tool call. `args` may be an object or raw JSON text (to test bad model output). */
export function call(name: string, args: unknown = {}, id?: string, options: StepOptions & { text?: string } = {}): ScriptStep {
  return { text: options.text ?? '', calls: [toCall(name, args, id)], usage: options.usage, reasoning: options.reasoning };
}

/** A reply with several tool calls in one turn, given as `call()` steps or `[name, args, id]` tuples. */
export function batch(
  calls: ReadonlyArray<ScriptStep | readonly [string, unknown?, string?]>,
  options: StepOptions & { text?: string } = {},
): ScriptStep {
  const flat = calls.flatMap((c) => (Array.isArray(c) ? [toCall(c[0] as string, c[1], c[2] as string | undefined)] : (c as ScriptStep).calls));
  return { text: options.text ?? '', calls: flat, usage: options.usage, reasoning: options.reasoning };
}

function toCall(name: string, args: unknown, id: string | undefined): ToolCallRequest {
  return { id: id ?? `call_${++autoCallId}`, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
}

