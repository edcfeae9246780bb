import { UserError, type ArgumentIssue } from '../errors.js';

/**
 * A validator that follows Standard Schema v1 (standardschema.dev): zod 4, zod 3.24+,
 * valibot 1, arktype 2 and others expose it under `~standard`. Declared here from the spec
 * (a type-only contract), so troupe needs none of those libraries.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** What a Standard Schema validator answers: the (possibly transformed) value, or issues. */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined }> };

/** The validated value's type of a Standard Schema validator. */
export type StandardOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];

/** Whether `value` carries a Standard Schema v1 `~standard` object. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as { '~standard'?: { version?: unknown; validate?: unknown } })['~standard'];
  return typeof props === 'object' && props !== null && props.version === 1 && typeof props.validate === 'function';
}

export type Checked = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly issues: ArgumentIssue[] };

/**
 * Runs a validator on tool arguments. Arguments are validated synchronously (in preflight,
 * in request order), so a validator that answers with a Promise (async refinements) is a
 * configuration error.
 * @throws UserError when the validator is asynchronous.
 */
export function checkWith(validator: StandardSchemaV1, value: unknown, toolName: string): Checked {
  const result = validator['~standard'].validate(value);
  if (result instanceof Promise) {
    // Observe it: an async validator that later rejects must not become an unhandled rejection.
    result.catch(() => undefined);
    throw new UserError(`Tool '${toolName}': its parameters validator answered asynchronously; tool arguments are validated synchronously, so use a schema without async checks.`);
  }
  if (!result.issues) return { ok: true, value: result.value };
  return {
    ok: false,
    issues: result.issues.map((issue) => {
      const path = (issue.path ?? []).map((segment) => String(typeof segment === 'object' && segment !== null ? segment.key : segment));
      return { path: path.length === 0 ? '(root)' : path.join('.'), message: issue.message };
    }),
  };
}
