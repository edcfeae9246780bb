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

export interface Rendered {
  readonly output: string;
  readonly isError: boolean;
}

/**
 * Tool renderer, else agent renderer, else default. A renderer may return a Promise: its
 * value is awaited. A throwing or rejecting renderer is reported as a tool error (the tool
 * is not run again). Never throws and never rejects.
 */
export function renderSuccess(
  value: unknown,
  ctx: RunContext<any>,
  toolRenderer: ResultRenderer | undefined,
  agentRenderer: ResultRenderer | undefined,
): Rendered | Promise<Rendered> {
  const renderer = toolRenderer ?? agentRenderer;
  if (!renderer) return { output: defaultRender(value), isError: false };
  try {
    const rendered: unknown = renderer(value, ctx);
    if (isThenable(rendered)) return Promise.resolve(rendered).then(renderedText, renderFailed);
    return renderedText(rendered);
  } catch (error) {
    return renderFailed(error);
  }
}

function renderedText(rendered: unknown): Rendered {
  return { output: typeof rendered === 'string' ? rendered : defaultRender(rendered), isError: false };
}

function renderFailed(error: unknown): Rendered {
  return { output: `Tool error: result rendering failed: ${errorText(error)}`, isError: true };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** "Tool error: <message or class name>" plus the ToolError hint line. */
export function formatToolError(error: unknown): string {
  const base = `Tool error: ${errorText(error)}`;
  return error instanceof ToolError && error.hint ? `${base}\n  hint: ${error.hint}` : base;
}

/** An error's message; with no message, its class name (a thrown non-Error object: its class name, or its JSON). */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.constructor.name || error.name || 'Error';
  if (typeof error === 'string') return error || 'empty error';
  if (typeof error === 'object' && error !== null) {
    const name = (error as { constructor?: { name?: unknown } }).constructor?.name;
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string' && message) return message;
    if (typeof name === 'string' && name && name !== 'Object') return name;
  }
  return defaultRender(error) || String(error);
}
