import { z } from 'zod';

/** A JSON Schema object as shown to the model. */
export type JsonSchema = { [key: string]: unknown };

/**
 * Derives the model-facing JSON Schema from a zod schema. Uses the *input* shape, so
 * fields with defaults are optional for the model. `strict` follows OpenAI strict mode:
 * every object closed (`additionalProperties: false`), every property required, and
 * properties that were optional become nullable (null is read back as "absent").
 */
export function toModelSchema(parameters: z.ZodType, strict: boolean): JsonSchema {
  const schema = z.toJSONSchema(parameters, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete schema.$schema;
  return strict ? strictify(schema) : schema;
}

/** OpenAI strict mode for a JSON Schema (see `toModelSchema`). */
export function strictify(node: unknown): JsonSchema {
  if (!isObject(node)) return node as JsonSchema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strictify(v)]));
    } else if (key === 'items' || key === 'additionalProperties') {
      out[key] = isObject(value) ? strictify(value) : value;
    } else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf' || key === 'prefixItems') && Array.isArray(value)) {
      out[key] = value.map(strictify);
    } else if (key === '$defs' && isObject(value)) {
      out.$defs = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strictify(v)]));
    } else {
      out[key] = value;
    }
  }
  if (node.type === 'object' && isObject(out.properties)) {
    const properties = out.properties as Record<string, JsonSchema>;
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    for (const name of Object.keys(properties)) {
      if (!required.has(name)) properties[name] = nullable(properties[name]!);
    }
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  return out;
}

function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  if (Array.isArray(schema.type)) return schema.type.includes('null') ? schema : { ...schema, type: [...schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

/**
 * In strict mode the model sends `null` for an absent optional property. Before
 * validation, such nulls are removed wherever the *non-strict* schema says the property
 * was optional, so zod sees the value as absent (and applies defaults).
 */
export function dropStrictNulls(value: unknown, looseSchema: JsonSchema): unknown {
  if (!isObject(value) || !isObject(looseSchema.properties)) {
    if (Array.isArray(value) && isObject(looseSchema.items)) {
      return value.map((item) => dropStrictNulls(item, looseSchema.items as JsonSchema));
    }
    return value;
  }
  const properties = looseSchema.properties as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(looseSchema.required) ? (looseSchema.required as string[]) : []);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === null && !required.has(key) && key in properties) continue;
    out[key] = key in properties ? dropStrictNulls(item, properties[key]!) : item;
  }
  return out;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
