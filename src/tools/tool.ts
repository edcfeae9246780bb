import type { z } from 'zod';
import { UserError } from '../errors.js';
import type { RunContext } from './context.js';
import { toModelSchema, type JsonSchema } from './schema.js';

/** Turns a tool's value into the text the model sees; may be async (its value is awaited). */
export type ResultRenderer = (result: unknown, ctx: RunContext<any>) => string | Promise<string>;

/**
 * Wraps one attempt of a tool: receives the next link of the chain, the raw (unvalidated)
 * arguments and the context. May change arguments, short-circuit, loop or transform results.
 */
export type ToolPolicy = (
  invoke: (args: unknown, ctx: RunContext<any>) => Promise<unknown>,
  args: unknown,
  ctx: RunContext<any>,
) => Promise<unknown>;

export type NeedsApproval<Args> = boolean | ((args: Args, ctx: RunContext<any>) => boolean | Promise<boolean>);

export interface ToolOptions<Schema extends z.ZodType, Deps = any> {
  name: string;
  description: string;
  parameters: Schema;
  execute: (args: z.output<Schema>, ctx: RunContext<Deps>) => unknown;
  /** false makes the call a barrier: it waits for in-flight calls and runs alone. Default true. */
  parallel?: boolean;
  /** "sequential" makes the whole batch it appears in run one call at a time. */
  executionMode?: 'parallel' | 'sequential';
  needsApproval?: NeedsApproval<z.output<Schema>>;
  /** Extra attempts after the first failure; undefined inherits the agent's defaultToolRetries. */
  retries?: number;
  /** Per attempt; undefined inherits the agent's defaultToolTimeoutMs. */
  timeoutMs?: number;
  /** undefined inherits the agent's maxToolOutputChars; null turns truncation off. */
  maxOutputChars?: number | null;
  resultRenderer?: ResultRenderer;
  policies?: readonly ToolPolicy[];
  /** OpenAI strict mode for the schema. Default false. */
  strict?: boolean;
}

/** A tool as the runtime sees it. Built by `tool()`; handoff tools set `handoff`. */
export interface Tool<Deps = any> {
  readonly name: string;
  readonly description: string;
  readonly parameters: z.ZodType;
  /** Schema shown to the model. */
  readonly jsonSchema: JsonSchema;
  /** Non-strict input schema, used for strict-null handling and coercion. */
  readonly looseSchema: JsonSchema;
  readonly strict: boolean;
  readonly execute: (args: any, ctx: RunContext<Deps>) => unknown;
  readonly parallel: boolean;
  readonly executionMode: 'parallel' | 'sequential';
  readonly needsApproval: NeedsApproval<any>;
  readonly retries: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly maxOutputChars: number | null | undefined;
  readonly resultRenderer: ResultRenderer | undefined;
  readonly policies: readonly ToolPolicy[];
  /** Where the tool came from, for name-conflict messages ("agent tools", "handoffs", …). */
  readonly source: string;
  /** Set on handoff tools: always a barrier, first one in a turn wins. `target` is the agent (typed loosely to avoid a cycle). */
  readonly handoff?: { readonly targetName: string; readonly target?: unknown };
  /** Set on agent-as-tool tools (`agent.asTool()`): the agent each call runs as a sub-run (typed loosely to avoid a cycle). */
  readonly agentTool?: { readonly agentName: string; readonly agent?: unknown };
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function tool<Schema extends z.ZodType, Deps = any>(options: ToolOptions<Schema, Deps>): Tool<Deps> {
  if (!TOOL_NAME.test(options.name)) {
    throw new UserError(`Invalid tool name '${options.name}': use 1-64 characters from a-z, A-Z, 0-9, '_' and '-'.`);
  }
  checkCount('retries', options.retries);
  checkCount('timeoutMs', options.timeoutMs);
  if (options.maxOutputChars != null) checkCount('maxOutputChars', options.maxOutputChars);
  const strict = options.strict ?? false;
  const looseSchema = toModelSchema(options.parameters, false);
  if (looseSchema.type !== 'object') {
    throw new UserError(`Tool '${options.name}': parameters must be a zod object schema.`);
  }
  return {
    name: options.name,
    description: options.description,
    parameters: options.parameters,
    jsonSchema: strict ? toModelSchema(options.parameters, true) : looseSchema,
    looseSchema,
    strict,
    execute: options.execute as Tool<Deps>['execute'],
    parallel: options.parallel ?? true,
    executionMode: options.executionMode ?? 'parallel',
    needsApproval: options.needsApproval ?? false,
    retries: options.retries,
    timeoutMs: options.timeoutMs,
    maxOutputChars: options.maxOutputChars,
    resultRenderer: options.resultRenderer,
    policies: options.policies ?? [],
    source: 'agent tools',
  };
}

function checkCount(name: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 0)) {
    throw new UserError(`Tool option '${name}' must be a non-negative integer, got ${String(value)}.`);
  }
}

/** The part of a tool the model sees. */
export interface ToolSchema {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly strict: boolean;
}

export function toToolSchema(t: Tool): ToolSchema {
  return { name: t.name, description: t.description, parameters: t.jsonSchema, strict: t.strict };
}
