/** Explicit tool return shape, for tools that want to flag errors, pass details or terminate. */
export interface ToolResult {
  /** What the model sees; strings pass as they are, anything else goes through the renderers. */
  readonly content: unknown;
  /** Passed to `tool_call_completed` observers only; never shown to the model. */
  readonly details?: unknown;
  readonly isError?: boolean;
  /** When every result of a batch terminates, the run completes without another model call. */
  readonly terminate?: boolean;
}

const TOOL_RESULT = Symbol.for('troupe.toolResult');

export function toolResult(result: ToolResult): ToolResult {
  return Object.assign(Object.create(null) as object, result, { [TOOL_RESULT]: true }) as ToolResult;
}

export function isToolResult(value: unknown): value is ToolResult {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TOOL_RESULT] === true;
}
