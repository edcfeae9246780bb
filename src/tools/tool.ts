import { UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import type { RunContext } from './context.js';
import { resolveParameters, type ToolParameters } from './parameters.js';
import { strictify, type JsonSchema } from './schema.js';
import type { StandardOutput, StandardSchemaV1 } from './standard-schema.js';

export type { ToolParameters } from './parameters.js';
export type { StandardSchemaV1 } from './standard-schema.js';

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

/**
 * The arguments `execute` receives for `parameters` of type `Schema`: a validator's output,
 * a JSON object for a JSON Schema, nothing for a tool without parameters.
 */
export type ToolArgs<Schema> = [Schema] extends [undefined] ? Record<string, never> : Schema extends StandardSchemaV1 ? StandardOutput<Schema> : Record<string, unknown>;

export interface ToolOptions<Schema extends ToolParameters | undefined = ToolParameters | undefined, Deps = any> {
  name: string;
  description: string;
  /**
   * The arguments: a Standard Schema v1 validator (zod 4, zod 3.24+, valibot, arktype, …;
   * the model sees the validator's own JSON Schema conversion, or `jsonSchema`), or a plain
   * JSON Schema object of type "object" (checked with a JSON Schema validator). Left out:
   * the tool takes no arguments. Anything else is a UserError.
   */
  parameters?: Schema;
  /**
   * The JSON Schema the model sees, for a validator without a conversion of its own (zod 3,
   * valibot without `@valibot/to-json-schema`, custom validators); it also replaces a
   * validator's own conversion. Arguments are still validated by `parameters`.
   */
  jsonSchema?: JsonSchema;
  execute: (args: ToolArgs<Schema>, ctx: RunContext<Deps>) => unknown;
  /** false makes the call a barrier: it waits for in-flight calls and runs alone. Default true. */
  parallel?: boolean;
  /** "sequential" makes the whole batch it appears in run one call at a time. */
  executionMode?: 'parallel' | 'sequential';
  needsApproval?: NeedsApproval<ToolArgs<Schema>>;
  /** Extra attempts after the first failure; undefined inherits the agent's defaultToolRetries. */
  retries?: number;
  /** Per attempt; undefined inherits the agent's defaultToolTimeoutMs. */
  timeoutMs?: number;
  /** undefined inherits the agent's maxToolOutputChars; null turns truncation off. */
  maxOutputChars?: number | null;
  resultRenderer?: ResultRenderer;
  policies?: readonly ToolPolicy[];
  /**
   * OpenAI strict mode for the schema (every kind of parameters): every object closed, every
   * property required, optional ones nullable (a null is read back as absent). Default false.
   */
  strict?: boolean;
  /**
   * false hides the tool from the model (CubePi's `expose_to_model`): its schema is never sent,
   * and only a `resolveToolCall` hook can route a call to it (a dispatcher tool the model sees,
   * resolved to this one). A model calling it by name gets the unknown-tool error. Default true.
   */
  exposeToModel?: boolean;
}

/** A tool as the runtime sees it. Built by `tool()`; handoff tools set `handoff`. */
export interface Tool<Deps = any> {
  readonly name: string;
  readonly description: string;
  /** The validator the model's arguments go through (for a JSON Schema, one troupe built around it). */
  readonly parameters: StandardSchemaV1;
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
  /**
   * The wait before the attempt after failed attempt n; absent: `retryDelayMs` (min(5000,
   * 100·2^(n-1)) ms). Not a `tool()` option: troupe/testing's explorer sets it to 0 on its
   * copies, so an explored retry takes no time (the events are the same; only the pause goes).
   */
  readonly retryBackoffMs?: (failedAttempt: number) => number;
  readonly timeoutMs: number | undefined;
  readonly maxOutputChars: number | null | undefined;
  readonly resultRenderer: ResultRenderer | undefined;
  readonly policies: readonly ToolPolicy[];
  /** false: hidden from the model, reachable only through a `resolveToolCall` hook (undefined: shown). */
  readonly exposeToModel?: boolean;
  /** Where the tool came from, for name-conflict messages ("agent tools", "handoffs", …). */
  readonly source: string;
  /** Set on handoff tools: always a barrier, first one in a turn wins. `target` is the agent (typed loosely to avoid a cycle). */
  readonly handoff?: { readonly targetName: string; readonly target?: unknown; /** The `handoff()` options it was made with (troupe/testing rebuilds it around a copy of the target). */ readonly options?: unknown };
  /** Set on agent-as-tool tools (`agent.asTool()`): the agent each call runs as a sub-run (typed loosely to avoid a cycle). */
  readonly agentTool?: { readonly agentName: string; readonly agent?: unknown; /** The `asTool()` options it was made with (its turn limit and budget; troupe/testing reads them). */ readonly options?: unknown };
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Every option `tool()` takes (an unknown one is a UserError naming the closest). */
export const TOOL_OPTION_KEYS = optionKeys<ToolOptions>({
  name: true,
  description: true,
  parameters: true,
  jsonSchema: true,
  execute: true,
  parallel: true,
  executionMode: true,
  needsApproval: true,
  retries: true,
  timeoutMs: true,
  maxOutputChars: true,
  resultRenderer: true,
  policies: true,
  strict: true,
  exposeToModel: true,
});

/**
 * A tool the model can call. @throws UserError for an unknown option (naming the closest),
 * a bad name or count, `parameters` of a kind it cannot use (naming what was passed and
 * what is accepted), or a validator without a JSON Schema conversion and no `jsonSchema`.
 */
export function tool<Schema extends ToolParameters | undefined = undefined, Deps = any>(options: ToolOptions<Schema, Deps>): Tool<Deps> {
  checkOptionKeys(options, TOOL_OPTION_KEYS, 'tool');
  if (typeof options.name !== 'string' || !TOOL_NAME.test(options.name)) {
    throw new UserError(`Invalid tool name ${typeof options.name === 'string' ? `'${options.name}'` : String(options.name)}: use 1-64 characters from a-z, A-Z, 0-9, '_' and '-'.`);
  }
  if (typeof options.execute !== 'function') throw new UserError(`Tool '${options.name}' needs an execute function.`);
  checkCount('retries', options.retries);
  checkCount('timeoutMs', options.timeoutMs);
  if (options.maxOutputChars != null) checkCount('maxOutputChars', options.maxOutputChars);
  if (options.executionMode !== undefined && options.executionMode !== 'parallel' && options.executionMode !== 'sequential') {
    throw new UserError(`Tool '${options.name}': executionMode must be "parallel" or "sequential", got ${JSON.stringify(options.executionMode)}.`);
  }
  if (options.exposeToModel !== undefined && typeof options.exposeToModel !== 'boolean') {
    throw new UserError(`Tool '${options.name}': exposeToModel must be a boolean, got ${JSON.stringify(options.exposeToModel)}.`);
  }
  const strict = options.strict ?? false;
  const { validator, looseSchema } = resolveParameters(options.name, options.parameters, options.jsonSchema);
  return {
    name: options.name,
    description: options.description,
    parameters: validator,
    jsonSchema: strict ? strictify(looseSchema) : looseSchema,
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
    ...(options.exposeToModel === false ? { exposeToModel: false } : {}),
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

/** Whether the model is shown this tool (not `exposeToModel: false`). */
export function isExposed(t: Tool): boolean {
  return t.exposeToModel !== false;
}

export function toToolSchema(t: Tool): ToolSchema {
  return { name: t.name, description: t.description, parameters: t.jsonSchema, strict: t.strict };
}
