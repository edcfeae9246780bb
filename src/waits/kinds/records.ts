/**
 * The stored shape of each call wait's request detail and resolution, as words for the log's
 * format check (src/store/format.ts). Dependency-free: the stores load it without the runtime.
 */

type Detail = Readonly<Record<string, unknown>>;

/** The kinds of wait a call's wait_request / wait_resolution entries may have (approvals have entries of their own). */
export const CALL_WAIT_KINDS = ['question', 'event', 'timer'] as const;
export type CallWaitKind = (typeof CALL_WAIT_KINDS)[number];
/** The call waits that report wait_opened / wait_resolved events (a question reports human_request / human_answer). */
export type SignalledWaitKind = Exclude<CallWaitKind, 'question'>;

/** An issue with a stored request detail, or undefined. */
export const DETAIL_ISSUE: Readonly<Record<CallWaitKind, (detail: Detail) => string | undefined>> = {
  question: (detail) => {
    if (typeof detail['question'] !== 'string') return "needs a string 'question'";
    if (detail['options'] !== undefined && !(Array.isArray(detail['options']) && detail['options'].every((o) => typeof o === 'string'))) return "has 'options' that are not strings";
    if (typeof detail['multiSelect'] !== 'boolean') return "needs a boolean 'multiSelect'";
    return detail['form'] === undefined ? undefined : formIssue(detail['form']);
  },
  event: (detail) => (typeof detail['name'] === 'string' && detail['name'].length > 0 ? undefined : "needs a non-empty string 'name'"),
  timer: (detail) => (typeof detail['until'] === 'number' && Number.isSafeInteger(detail['until']) && detail['until'] >= 0 ? undefined : "needs 'until', epoch ms"),
};

/** An issue with a stored resolution, or undefined. */
export const RESOLUTION_ISSUE: Readonly<Record<CallWaitKind, (resolution: unknown) => string | undefined>> = {
  question: (resolution) => (isAnswer(resolution) || isFormAnswers(resolution) ? undefined : 'must be a string, an array of strings, or an object of them (a form; null for a cancelled question)'),
  event: () => undefined,
  timer: (resolution) => (typeof resolution === 'object' && resolution !== null && typeof (resolution as { at?: unknown }).at === 'number' ? undefined : 'must be { at: <epoch ms> }'),
};

const isAnswer = (value: unknown): boolean => typeof value === 'string' || (Array.isArray(value) && value.every((a) => typeof a === 'string'));

const isFormAnswers = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((a) => a === null || isAnswer(a));

/** A stored form (format 5): a non-empty array of `{ key, question, options?, multiSelect }` with unique keys. */
function formIssue(form: unknown): string | undefined {
  if (!Array.isArray(form) || form.length === 0) return "has a 'form' that is not a non-empty array";
  const keys = new Set<string>();
  for (const [i, q] of form.entries()) {
    const question = q as Record<string, unknown> | null;
    if (typeof question !== 'object' || question === null || typeof question['key'] !== 'string' || question['key'].length === 0 || keys.has(question['key'])) return `has form question ${i + 1} without a unique non-empty string 'key'`;
    keys.add(question['key']);
    if (typeof question['question'] !== 'string') return `has form question ${i + 1} without a string 'question'`;
    if (question['options'] !== undefined && !isAnswer(question['options'])) return `has form question ${i + 1} with 'options' that are not strings`;
    if (typeof question['multiSelect'] !== 'boolean') return `has form question ${i + 1} without a boolean 'multiSelect'`;
  }
  return undefined;
}
