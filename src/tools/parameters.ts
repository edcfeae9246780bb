import { createRequire } from 'node:module';
import { z } from 'zod';
import { UserError } from '../errors.js';
import { jsonSchemaValidator } from './json-schema-validator.js';
import { isObject, toModelSchema, type JsonSchema } from './schema.js';
import { isStandardSchema, type StandardSchemaV1 } from './standard-schema.js';

/**
 * What a tool's `parameters` may be: a Standard Schema v1 validator (zod 4, zod 3.24+,
 * valibot, arktype, …) or a plain JSON Schema object of type "object". Left out, the tool
 * takes no arguments.
 */
export type ToolParameters = StandardSchemaV1 | JsonSchema;

/** A tool's parameters as the runtime uses them. */
export interface ResolvedParameters {
  /** Validates (and may transform) the model's arguments. */
  readonly validator: StandardSchemaV1;
  /** The non-strict JSON Schema of the arguments: shown to the model (strictified in strict mode), read for coercion. */
  readonly looseSchema: JsonSchema;
}

const ACCEPTED =
  'parameters must be a Standard Schema validator (zod 4, zod 3.24 or later, valibot, arktype, …), a JSON Schema object of type "object", or left out for a tool without arguments';

/** A tool without arguments: the model sees an empty object schema; any object it sends is accepted as `{}`. */
const NO_ARGUMENTS: ResolvedParameters = {
  looseSchema: { type: 'object', properties: {}, additionalProperties: false },
  validator: {
    '~standard': {
      version: 1,
      vendor: 'troupe',
      validate: (value) => (isObject(value) ? { value: {} } : { issues: [{ message: `expected an object, received ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}` }] }),
    },
  },
};

/**
 * Resolves a tool's `parameters` (and its explicit `jsonSchema`, for validators without a
 * JSON Schema conversion of their own).
 * @throws UserError naming what was passed and what is accepted; when a validator has no
 * JSON Schema conversion and no `jsonSchema` was given; when the schema is not of an object.
 */
export function resolveParameters(toolName: string, parameters: unknown, jsonSchema: unknown): ResolvedParameters {
  const where = `Tool '${toolName}'`;
  if (jsonSchema !== undefined && !isObject(jsonSchema)) throw new UserError(`${where}: jsonSchema must be a JSON Schema object, got ${describe(jsonSchema)}.`);
  if (parameters === undefined) {
    if (jsonSchema !== undefined) throw new UserError(`${where}: jsonSchema describes a validator's arguments; give it with parameters (a Standard Schema validator), or pass the JSON Schema as parameters.`);
    return NO_ARGUMENTS;
  }
  if (isStandardSchema(parameters)) {
    const looseSchema = objectSchema(where, jsonSchema !== undefined ? withoutMeta(jsonSchema) : modelSchemaOf(where, parameters));
    return { validator: parameters, looseSchema };
  }
  if (isJsonSchema(parameters)) {
    if (jsonSchema !== undefined) throw new UserError(`${where}: parameters is already a JSON Schema; leave out jsonSchema.`);
    const looseSchema = objectSchema(where, withoutMeta(parameters));
    return { validator: jsonSchemaValidator(toolName, parameters), looseSchema };
  }
  throw new UserError(`${where}: ${ACCEPTED}; got ${describe(parameters)}.`);
}

/** The validator's own JSON Schema of its input. @throws UserError when it has no conversion. */
function modelSchemaOf(where: string, validator: StandardSchemaV1): JsonSchema {
  const props = validator['~standard'] as StandardSchemaV1['~standard'] & { jsonSchema?: { input?: (options: { target: string }) => unknown } };
  // zod 4: the converter troupe has always used (fields with defaults are optional for the model; unrepresentable types become {}).
  if (props.vendor === 'zod' && '_zod' in (validator as object)) return toModelSchema(validator as z.ZodType, false);
  // Standard JSON Schema (zod 4.2+, arktype 2.1+, …): the validator converts itself.
  if (typeof props.jsonSchema?.input === 'function') return withoutMeta(props.jsonSchema.input({ target: 'draft-2020-12' }) as JsonSchema);
  const own = (validator as { toJsonSchema?: unknown }).toJsonSchema;
  if (typeof own === 'function') return withoutMeta((own as () => JsonSchema).call(validator));
  if (props.vendor === 'valibot') {
    const converter = valibotConverter();
    if (converter) return withoutMeta(converter(validator));
    throw new UserError(`${where}: a valibot schema needs @valibot/to-json-schema (npm install @valibot/to-json-schema) for the JSON Schema the model sees, or pass it as jsonSchema.`);
  }
  if (props.vendor === 'zod') {
    throw new UserError(`${where}: parameters is a zod 3 schema, which has no JSON Schema conversion built in; pass the JSON Schema the model should see as jsonSchema (e.g. from zod-to-json-schema), or use zod 4.`);
  }
  throw new UserError(`${where}: the ${props.vendor} validator has no JSON Schema conversion troupe knows; pass the JSON Schema the model should see as jsonSchema.`);
}

let valibotToJsonSchema: ((schema: unknown) => JsonSchema) | null | undefined;

/** `@valibot/to-json-schema`'s `toJsonSchema` when the application installed it (loaded once, synchronously); else undefined. */
function valibotConverter(): ((schema: unknown) => JsonSchema) | undefined {
  if (valibotToJsonSchema === undefined) {
    try {
      valibotToJsonSchema = (createRequire(import.meta.url)('@valibot/to-json-schema') as { toJsonSchema: (schema: unknown) => JsonSchema }).toJsonSchema;
    } catch {
      valibotToJsonSchema = null;
    }
  }
  return valibotToJsonSchema ?? undefined;
}

/**
 * A plain object that can be a JSON Schema: JSON data only (no functions, no class
 * instances), so a schema object of a library without Standard Schema support (zod before
 * 3.24, yup, …) is not mistaken for one.
 */
function isJsonSchema(value: unknown): value is JsonSchema {
  if (!isObject(value)) return false;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(value).every((item) => typeof item !== 'function');
}

function withoutMeta(schema: JsonSchema): JsonSchema {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/** Tool arguments are an object: the schema must say so (a schema without `type` but with `properties` is taken as one). */
function objectSchema(where: string, schema: JsonSchema): JsonSchema {
  const out = { ...schema };
  if (out.type === undefined && isObject(out.properties)) out.type = 'object';
  if (out.type !== 'object') throw new UserError(`${where}: parameters must describe an object (JSON Schema type "object"), got ${out.type === undefined ? 'a schema without a type' : `type ${JSON.stringify(out.type)}`}.`);
  if (!isObject(out.properties)) out.properties = {};
  return out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object') return `${typeof value} ${JSON.stringify(value)}`;
  if ('_def' in value && typeof (value as { safeParse?: unknown }).safeParse === 'function') return 'a zod schema without Standard Schema support (zod before 3.24; upgrade zod)';
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
  return name && name !== 'Object' ? `an instance of ${name}` : 'an object with functions in it';
}
