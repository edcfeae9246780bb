import { UserError } from '../errors.js';
import type { WaitView } from '../waits/wait-types.js';
import { checkFormAnswers, formOf, type FormAnswers, type StoredFormQuestion } from './human-form.js';

/** A question a tool (askHuman without a channel) is waiting to have answered, anywhere in the run tree. */
export interface HumanRequest {
  /** Unique in the run tree: `<runId>:<turn>.<index>` of the asking call. */
  readonly requestId: string;
  readonly runId: string;
  readonly callId: string;
  readonly path: readonly string[];
  readonly agent: string;
  readonly question: string;
  /** The answers to pick from; without them any text answers. */
  readonly options?: readonly string[];
  /** With options: the answer is an array of them (possibly empty). */
  readonly multiSelect: boolean;
  /**
   * A form: several keyed questions asked at once (`question` is its title). The answer is
   * then an object by key (FormAnswers); `null` for a key cancels that one question.
   */
  readonly form?: readonly StoredFormQuestion[];
  readonly requestedAt: number;
}

/** An answer: text, an array of options (multi-select), or a form's answers by key. */
export type HumanAnswer = string | readonly string[] | FormAnswers;

/** A question wait as `handle.humans.pending()` lists it. */
export function humanRequest(view: WaitView): HumanRequest {
  const options = view.detail['options'];
  return {
    requestId: view.waitId,
    runId: view.runId,
    callId: view.callId,
    path: view.path,
    agent: view.agent,
    question: String(view.detail['question']),
    ...(Array.isArray(options) ? { options: options as string[] } : {}),
    multiSelect: view.detail['multiSelect'] === true,
    ...(formOf(view.detail) ? { form: formOf(view.detail)! } : {}),
    requestedAt: view.requestedAt,
  };
}

/**
 * Checks an answer against a question as it is stored (its options, or its form).
 * @throws UserError when it does not fit.
 */
export function checkHumanAnswer(detail: Readonly<Record<string, unknown>>, answer: unknown): HumanAnswer {
  const question = String(detail['question']);
  const form = formOf(detail);
  if (form) return checkFormAnswers(question, form, answer, (q, a) => checkAnswer(q, a) as string | readonly string[]);
  return checkAnswer(detail as { question: string; options?: readonly string[]; multiSelect: boolean }, answer);
}

/** Checks an answer against a question's options. @throws UserError when it does not fit. */
export function checkAnswer(view: Pick<HumanRequest, 'question' | 'options' | 'multiSelect'>, answer: unknown): string | readonly string[] {
  const options = view.options;
  if (!options) {
    if (typeof answer !== 'string') throw new UserError(`The answer to '${view.question}' must be a string, got ${typeof answer}.`);
    return answer;
  }
  const pick = (value: unknown): string => {
    if (typeof value !== 'string' || !options.includes(value)) throw new UserError(`'${String(value)}' is not an option of '${view.question}'; options: ${options.join(', ')}.`);
    return value;
  };
  if (view.multiSelect) {
    if (!Array.isArray(answer)) throw new UserError(`The answer to '${view.question}' must be an array of its options (multi-select).`);
    return [...new Set(answer.map(pick))];
  }
  return pick(answer);
}
