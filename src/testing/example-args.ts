/**
 * A small value valid for a JSON Schema, for the arguments of a call an explored reply makes:
 * `const`, the first `enum` value or the `default` when there is one; otherwise the smallest
 * value of the type within its bounds; objects get their required properties only. Schemas it
 * cannot satisfy give a value the tool's validation rejects, which is a path too (an
 * argument error result).
 */
export function exampleValue(schema: unknown): unknown {
  if (!isObject(schema)) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return exampleValue(options.find((o) => !(isObject(o) && o.type === 'null')) ?? options[0]);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return exampleValue(Object.assign({}, ...schema.allOf.filter(isObject)));
  const type = Array.isArray(schema.type) ? (schema.type.find((t) => t !== 'null') ?? 'null') : schema.type;
  switch (type) {
    case 'string': {
      const length = typeof schema.minLength === 'number' ? Math.max(1, schema.minLength) : 1;
      return 'x'.repeat(length);
    }
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : 1;
      const max = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 1 : Infinity;
      const value = Math.min(min, max);
      return type === 'integer' ? Math.ceil(value) : value;
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const count = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return Array.from({ length: count }, () => exampleValue(schema.items));
    }
    default: {
      const properties = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as unknown[]).filter((k): k is string => typeof k === 'string') : [];
      return Object.fromEntries(required.map((key) => [key, exampleValue(properties[key])]));
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
