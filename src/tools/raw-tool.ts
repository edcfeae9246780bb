import { z } from 'zod';
import { UserError, type ArgumentIssue } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import type { RunContext } from './context.js';
import { isObject, type JsonSchema } from './schema.js';
import { tool, type NeedsApproval, type Tool, type ToolOptions } from './tool.js';

export interface RawToolOptions<Deps = any>
  extends Omit<ToolOptions<z.ZodType, Deps>, 'parameters' | 'jsonSchema' | 'execute' | 'needsApproval' | 'strict'> {
  /** A JSON Schema of type "object", shown to the model as it is. */
  parameters: JsonSchema;
  execute: (args: Record<string, unknown>, ctx: RunContext<Deps>) => unknown;
  needsApproval?: NeedsApproval<Record<string, unknown>>;
  /**
   * "check" (default): arguments are checked against a subset of JSON Schema before
   * `execute` (see `checkJsonSchema`), with the usual lax-value coercion ("5" → 5).
   * "none": any JSON object passes through; the receiver validates.
   */
  validate?: 'check' | 'none';
  /** For name-conflict messages, e.g. "MCP server 'github'". Default "agent tools". */
  source?: string;
}

const RAW_TOOL_KEYS = optionKeys<RawToolOptions>({
  name: true,
  description: true,
  parameters: true,
  execute: true,
  parallel: true,
  executionMode: true,
  needsApproval: true,
  retries: true,
  timeoutMs: true,
  maxOutputChars: true,
  resultRenderer: true,
  policies: true,
  validate: true,
  source: true,
  exposeToModel: true,
});

/**
 * A tool whose parameters are a raw JSON Schema instead of zod, for schemas that come
 * from elsewhere at run time (MCP servers, OpenAPI, configuration). Never strict: the
 * schema is shown to the model as given.
 */
export function rawTool<Deps = any>(options: RawToolOptions<Deps>): Tool<Deps> {
  checkOptionKeys(options, RAW_TOOL_KEYS, 'rawTool');
  const { parameters, validate = 'check', source, ...rest } = options;
  const schema = normalizeObjectSchema(options.name, parameters);
  // tool() checks the name and the numeric options; the schema parts are replaced below.
  const base = tool<z.ZodType, Deps>({ ...rest, parameters: z.object({}).loose(), strict: false } as ToolOptions<z.ZodType, Deps>);
  const check = z.unknown().superRefine((value, ctx) => {
    if (validate === 'none') return;
    for (const issue of checkJsonSchema(value, schema)) ctx.addIssue({ code: 'custom', message: issue.message, path: [...issue.segments] });
  });
  return { ...base, parameters: check, jsonSchema: schema, looseSchema: schema, strict: false, source: source ?? base.source };
}

/** Requires an object schema; fills in what strict-minded providers expect (`properties`). */
function normalizeObjectSchema(name: string, parameters: JsonSchema): JsonSchema {
  if (!isObject(parameters)) throw new UserError(`Tool '${name}': parameters must be a JSON Schema object.`);
  const { $schema: _ignored, ...schema } = parameters;
  if (schema.type === undefined) schema.type = 'object';
  if (schema.type !== 'object') {
    throw new UserError(`Tool '${name}': parameters must be a JSON Schema of type 'object', got ${JSON.stringify(schema.type)}.`);
  }
  if (!isObject(schema.properties)) schema.properties = {};
  return schema;
}

export interface SchemaIssue extends ArgumentIssue {
  readonly segments: ReadonlyArray<string | number>;
}

/**
 * A small JSON Schema check, enough for tool arguments: `type` (incl. "integer" and
 * type arrays), `enum`, `const`, `properties`, `required`, `additionalProperties`,
 * `items`, `minItems`/`maxItems`, `minLength`/`maxLength`, `pattern`, `minimum`/`maximum`,
 * `exclusiveMinimum`/`exclusiveMaximum`, `anyOf`/`oneOf` (any branch), `allOf` and local
 * `$ref`s (`#/$defs/…`, `#/definitions/…`). Other keywords (formats, `if`/`then`,
 * dependencies, …) are not checked: the receiver stays the authority.
 */
export function checkJsonSchema(value: unknown, schema: JsonSchema, root: JsonSchema = schema): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  walk(value, schema, root, [], issues, 0);
  return issues;
}

function walk(value: unknown, schema: unknown, root: JsonSchema, at: Array<string | number>, issues: SchemaIssue[], depth: number): void {
  if (!isObject(schema) || depth > 64) return; // `true`, `{}` and unknown forms accept anything
  const add = (message: string, segments = at): void => {
    issues.push({ path: segments.length ? segments.map(String).join('.') : '(root)', message, segments: [...segments] });
  };
  if (typeof schema.$ref === 'string') {
    const target = resolveRef(schema.$ref, root);
    if (target) walk(value, target, root, at, issues, depth + 1);
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as unknown[]) : [schema.type];
    if (!types.some((t) => typeof t === 'string' && matchesType(value, t))) {
      return add(`expected ${types.join(' or ')}, received ${typeName(value)}`);
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => sameJson(option, value))) {
    add(`expected one of ${schema.enum.map((o) => JSON.stringify(o)).join(', ')}`);
  }
  if ('const' in schema && !sameJson(schema.const, value)) add(`expected ${JSON.stringify(schema.const)}`);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0 && !branches.some((b) => checkJsonSchema(value, b as JsonSchema, root).length === 0)) {
      add('does not match any of the allowed schemas');
    }
  }
  if (Array.isArray(schema.allOf)) for (const part of schema.allOf) walk(value, part, root, at, issues, depth + 1);

  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof schema.minLength === 'number' && length < schema.minLength) add(`expected at least ${schema.minLength} characters`);
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) add(`expected at most ${schema.maxLength} characters`);
    if (typeof schema.pattern === 'string') {
      let pattern: RegExp | undefined;
      try {
        pattern = new RegExp(schema.pattern, 'u');
      } catch {
        pattern = undefined; // a pattern JavaScript cannot compile is not checked
      }
      if (pattern && !pattern.test(value)) add(`expected to match /${schema.pattern}/`);
    }
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) add(`expected >= ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) add(`expected <= ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) add(`expected > ${schema.exclusiveMinimum}`);
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) add(`expected < ${schema.exclusiveMaximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) add(`expected at least ${schema.minItems} items`);
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) add(`expected at most ${schema.maxItems} items`);
    if (isObject(schema.items)) value.forEach((item, i) => walk(item, schema.items, root, [...at, i], issues, depth + 1));
  }
  if (isObject(value)) {
    const properties = isObject(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required)) {
      for (const name of schema.required) {
        if (typeof name === 'string' && !(name in value)) add('required property is missing', [...at, name]);
      }
    }
    for (const [key, item] of Object.entries(value)) {
      if (key in properties) walk(item, properties[key], root, [...at, key], issues, depth + 1);
      else if (schema.additionalProperties === false) add('unexpected property', [...at, key]);
      else if (isObject(schema.additionalProperties)) walk(item, schema.additionalProperties, root, [...at, key], issues, depth + 1);
    }
  }
}

function resolveRef(ref: string, root: JsonSchema): unknown {
  if (ref === '#') return root;
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!match) return undefined;
  const defs = root[match[1]!];
  return isObject(defs) ? defs[decodeURIComponent(match[2]!).replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
}

function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return true;
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && !Number.isInteger(value)) return 'number';
  if (typeof value === 'number') return 'integer';
  return typeof value;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (isObject(value)) return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical(value[k])]));
  return value;
}
