import { ToolError } from '../errors.js';
import type { RunContext } from './context.js';
import type { ResultRenderer } from './tool.js';

/** Default rendering: strings as they are, everything else as JSON. */
export function defaultRender(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value, jsonReplacer) ?? String(value);
  } catch {
    return String(value);
  }
}

function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

/** Tool renderer, else agent renderer, else default. A throwing renderer is reported as a tool error. */
export function renderSuccess(
  value: unknown,
  ctx: RunContext<any>,
  toolRenderer: ResultRenderer | undefined,
  agentRenderer: ResultRenderer | undefined,
): { output: string; isError: boolean } {
  const renderer = toolRenderer ?? agentRenderer;
  if (!renderer) return { output: defaultRender(value), isError: false };
  try {
    const rendered = renderer(value, ctx);
    return { output: typeof rendered === 'string' ? rendered : defaultRender(rendered), isError: false };
  } catch (error) {
    return { output: `Tool error: result rendering failed: ${errorText(error)}`, isError: true };
  }
}

/** "Tool error: <message or class name>" plus the ToolError hint line. */
export function formatToolError(error: unknown): string {
  const base = `Tool error: ${errorText(error)}`;
  return error instanceof ToolError && error.hint ? `${base}\n  hint: ${error.hint}` : base;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.constructor.name || error.name;
  return typeof error === 'string' && error ? error : defaultRender(error);
}
