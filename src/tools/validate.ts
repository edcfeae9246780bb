import { InvalidToolArguments } from '../errors.js';
import { dropStrictNulls, isObject, type JsonSchema } from './schema.js';
import { checkWith, type StandardSchemaV1 } from './standard-schema.js';

interface ValidationTarget {
  readonly name: string;
  /** The validator (a Standard Schema: the user's, or troupe's around a JSON Schema). */
  readonly parameters: StandardSchemaV1;
  readonly strict: boolean;
  /** Non-strict input schema, used to read back strict-mode nulls and to coerce. */
  readonly looseSchema: JsonSchema;
}

/**
 * Validates model arguments against the tool's validator. The happy path is a single
 * validation; only when it fails do we coerce lax model output ("5" for 5, "true" for
 * true, by the JSON Schema) and try once more, so well-formed calls pay nothing for coercion.
 * @throws InvalidToolArguments naming every bad path; UserError when the validator is asynchronous.
 */
export function validateArguments(tool: ValidationTarget, raw: unknown): unknown {
  const input = tool.strict ? dropStrictNulls(raw, tool.looseSchema) : raw;
  const first = checkWith(tool.parameters, input, tool.name);
  if (first.ok) return first.value;
  const coerced = coerce(input, tool.looseSchema);
  const second = coerced === input ? first : checkWith(tool.parameters, coerced, tool.name);
  if (second.ok) return second.value;
  throw new InvalidToolArguments(
    `Invalid arguments for tool '${tool.name}': ${second.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    second.issues,
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
