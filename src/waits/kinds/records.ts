/**
 * The stored shape of each call wait's request detail and resolution, as words for the log's
 * format check (src/store/format.ts). Dependency-free: the stores load it without the runtime.
 */

type Detail = Readonly<Record<string, unknown>>;

/** The kinds of wait a call's wait_request / wait_resolution entries may have (approvals have entries of their own). */
export const CALL_WAIT_KINDS = ['question', 'event', 'timer'] as const;
export type CallWaitKind = (typeof CALL_WAIT_KINDS)[number];

/** An issue with a stored request detail, or undefined. */
export const DETAIL_ISSUE: Readonly<Record<CallWaitKind, (detail: Detail) => string | undefined>> = {
  question: (detail) => {
    if (typeof detail['question'] !== 'string') return "needs a string 'question'";
    if (detail['options'] !== undefined && !(Array.isArray(detail['options']) && detail['options'].every((o) => typeof o === 'string'))) return "has 'options' that are not strings";
    return typeof detail['multiSelect'] === 'boolean' ? undefined : "needs a boolean 'multiSelect'";
  },
  event: (detail) => (typeof detail['name'] === 'string' && detail['name'].length > 0 ? undefined : "needs a non-empty string 'name'"),
  timer: (detail) => (typeof detail['until'] === 'number' && Number.isSafeInteger(detail['until']) && detail['until'] >= 0 ? undefined : "needs 'until', epoch ms"),
};

/** An issue with a stored resolution, or undefined. */
export const RESOLUTION_ISSUE: Readonly<Record<CallWaitKind, (resolution: unknown) => string | undefined>> = {
  question: (resolution) => (typeof resolution === 'string' || (Array.isArray(resolution) && resolution.every((a) => typeof a === 'string')) ? undefined : 'must be a string or an array of strings'),
  event: () => undefined,
  timer: (resolution) => (typeof resolution === 'object' && resolution !== null && typeof (resolution as { at?: unknown }).at === 'number' ? undefined : 'must be { at: <epoch ms> }'),
};
