import type { z } from 'zod';
import { InvalidToolArguments, type ArgumentIssue } from '../errors.js';
import { dropStrictNulls, isObject, type JsonSchema } from './schema.js';

interface ValidationTarget {
  readonly name: string;
  readonly parameters: z.ZodType;
  readonly strict: boolean;
  /** Non-strict input schema, used to read back strict-mode nulls and to coerce. */
  readonly looseSchema: JsonSchema;
}

/**
 * Validates model arguments against the tool's zod schema. The happy path is a single
 * `safeParse`; only when it fails do we coerce lax model output ("5" for 5, "true" for
 * true) and try once more, so well-formed calls pay nothing for coercion.
 * Throws InvalidToolArguments naming every bad path.
 */
export function validateArguments(tool: ValidationTarget, raw: unknown): unknown {
  const input = tool.strict ? dropStrictNulls(raw, tool.looseSchema) : raw;
  const first = tool.parameters.safeParse(input);
  if (first.success) return first.data;
  const coerced = coerce(input, tool.looseSchema);
  const second = coerced === input ? first : tool.parameters.safeParse(coerced);
  if (second.success) return second.data;
  const issues: ArgumentIssue[] = second.error.issues.map((issue) => ({
    path: issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.'),
    message: issue.message,
  }));
  throw new InvalidToolArguments(
    `Invalid arguments for tool '${tool.name}': ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    issues,
  );
}

/** Returns the same reference when nothing needed coercion. */
function coerce(value: unknown, schema: JsonSchema | undefined): unknown {
  if (!schema) return value;
  const type = schema.type;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if ((type === 'number' || type === 'integer') && trimmed !== '' && Number.isFinite(Number(trimmed))) return Number(trimmed);
    if (type === 'boolean' && (trimmed === 'true' || trimmed === 'false')) return trimmed === 'true';
    return value;
  }
  if (Array.isArray(value) && isObject(schema.items)) {
    let changed = false;
    const out = value.map((item) => {
      const next = coerce(item, schema.items as JsonSchema);
      if (next !== item) changed = true;
      return next;
    });
    return changed ? out : value;
  }
  if (isObject(value) && isObject(schema.properties)) {
    const properties = schema.properties as Record<string, JsonSchema>;
    let changed = false;
    const out: Record<string, unknown> = { ...value };
    for (const key of Object.keys(value)) {
      const next = coerce(value[key], properties[key]);
      if (next !== value[key]) {
        out[key] = next;
        changed = true;
      }
    }
    return changed ? out : value;
  }
  return value;
}
