import type { StoredFormQuestion } from '../runtime/human-form.js';
import { WAIT_REQUEST, type WaitRequest } from './wait-types.js';

/** A question for a person, asked through the run (askHuman without a channel, askFromTool); a form when `choices.form` is given (already checked: storedForm). */
export function waitForAnswer(
  question: string,
  choices: { readonly options?: readonly string[]; readonly multiSelect: boolean; readonly form?: readonly StoredFormQuestion[] },
  timeoutMs: number | undefined,
): WaitRequest {
  return {
    [WAIT_REQUEST]: true,
    kind: 'question',
    detail: { question, ...(choices.options ? { options: [...choices.options] } : {}), multiSelect: choices.multiSelect, ...(choices.form ? { form: choices.form } : {}) },
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  };
}
