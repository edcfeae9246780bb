import { createRequire } from 'node:module';
import { UserError } from '../errors.js';
import type { JsonSchema } from './schema.js';
import type { StandardSchemaV1 } from './standard-schema.js';

/** The parts of `@cfworker/json-schema` used here. */
interface CfworkerValidator {
  validate(instance: unknown): { valid: boolean; errors: ReadonlyArray<{ instanceLocation: string; keyword: string; keywordLocation: string; error: string }> };
}
type CfworkerModule = { Validator: new (schema: object, draft?: string, shortCircuit?: boolean) => CfworkerValidator };

let cfworker: CfworkerModule | undefined;

/** Loaded on the first JSON Schema tool (synchronously, its CommonJS build), so runs without one never load it. */
function validatorModule(): CfworkerModule {
  return (cfworker ??= createRequire(import.meta.url)('@cfworker/json-schema') as CfworkerModule);
}

const DRAFTS: ReadonlyArray<[RegExp, string]> = [
  [/draft-04/, '4'],
  [/draft-07/, '7'],
  [/2019-09/, '2019-09'],
  [/2020-12/, '2020-12'],
];

/**
 * A Standard Schema validator for a JSON Schema (drafts 4, 7, 2019-09 and 2020-12, by its
 * `$schema`; 2020-12 when it names none), checked with `@cfworker/json-schema`. Issues name
 * the innermost failing keyword at each path (`a.0: Instance type "number" is invalid.
 * Expected "string".`, `a: required property is missing`, `x: unexpected property`).
 * @throws UserError when the schema cannot be compiled.
 */
export function jsonSchemaValidator(toolName: string, schema: JsonSchema): StandardSchemaV1<Record<string, unknown>> {
  const named = typeof schema.$schema === 'string' ? DRAFTS.find(([pattern]) => pattern.test(schema.$schema as string))?.[1] : undefined;
  let validator: CfworkerValidator;
  try {
    checkRefs(schema, schema);
    validator = new (validatorModule().Validator)(schema, named ?? '2020-12', false);
  } catch (error) {
    throw new UserError(`Tool '${toolName}': parameters is not a usable JSON Schema: ${(error as Error)?.message ?? String(error)}`);
  }
  return {
    '~standard': {
      version: 1,
      vendor: 'troupe-json-schema',
      validate: (value) => {
        const result = validator.validate(value);
        return result.valid ? { value: value as Record<string, unknown> } : { issues: leafIssues(result.errors) };
      },
    },
  };
}

function leafIssues(errors: ReadonlyArray<{ instanceLocation: string; keyword: string; keywordLocation: string; error: string }>): Array<{ message: string; path: string[] }> {
  const issues: Array<{ message: string; path: string[] }> = [];
  for (const error of errors) {
    const at = pointer(error.instanceLocation);
    const named = /^(?:Instance does not have required property|Property) "(.*)"/.exec(error.error)?.[1];
    if (error.keyword === 'required' && named !== undefined) issues.push({ path: [...at, named], message: 'required property is missing' });
    else if (error.keyword === 'additionalProperties' && named !== undefined) issues.push({ path: [...at, named], message: 'unexpected property' });
    else if (error.keyword === 'false') continue; // the additionalProperties issue above says it
    // A summary ("Property "a" does not match schema.") comes with the nested errors that say why.
    else if (!errors.some((other) => other !== error && other.keywordLocation.startsWith(`${error.keywordLocation}/`))) issues.push({ path: at, message: error.error });
  }
  return issues;
}

/** Every `$ref` must point into the schema itself (nothing is fetched): a broken one fails at `tool()`, not at the first call. */
function checkRefs(node: unknown, root: JsonSchema, depth = 0): void {
  if (typeof node !== 'object' || node === null || depth > 64) return;
  if (Array.isArray(node)) {
    for (const item of node) checkRefs(item, root, depth + 1);
    return;
  }
  const ref = (node as Record<string, unknown>).$ref;
  if (typeof ref === 'string' && !resolves(ref, root)) throw new Error(`$ref '${ref}' does not point into the schema (only local references like '#/$defs/name' are used).`);
  for (const [key, value] of Object.entries(node)) if (key !== 'const' && key !== 'enum' && key !== 'default' && key !== 'examples') checkRefs(value, root, depth + 1);
}

function resolves(ref: string, root: JsonSchema): boolean {
  if (!ref.startsWith('#')) return false;
  let at: unknown = root;
  for (const segment of pointer(ref)) {
    if (typeof at !== 'object' || at === null || !(segment in at)) return false;
    at = (at as Record<string, unknown>)[segment];
  }
  return true;
}

/** `#/a/0` → ['a', '0']. */
function pointer(location: string): string[] {
  return location
    .replace(/^#\/?/, '')
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~'));
}
