import { checkContentParts, looksLikeContentParts } from '../message-parts.js';

/** Explicit tool return shape, for tools that want to flag errors, pass details or terminate. */
export interface ToolResult {
  /**
   * What the model sees; strings pass as they are. An array of content parts (every element
   * `{ type: 'text' | 'image' | 'file', … }`) is sent as parts to models that take media in
   * tool results, as its text projection to the others (renderers are skipped). Anything
   * else goes through the renderers.
   */
  readonly content: unknown;
  /** Passed to `tool_call_completed` observers only; never shown to the model. */
  readonly details?: unknown;
  readonly isError?: boolean;
  /** When every result of a batch terminates, the run completes without another model call. */
  readonly terminate?: boolean;
}

const TOOL_RESULT = Symbol.for('troupe.toolResult');

/** Marks an explicit tool result. @throws UserError when `content` is a content-part array with a damaged part */
export function toolResult(result: ToolResult): ToolResult {
  const marked = Object.assign(Object.create(null) as object, result, { [TOOL_RESULT]: true }) as ToolResult;
  if (looksLikeContentParts(result.content)) (marked as { content: unknown }).content = checkContentParts(result.content, 'toolResult');
  return marked;
}

export function isToolResult(value: unknown): value is ToolResult {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TOOL_RESULT] === true;
}
