import { UserError } from '../errors.js';

/**
 * Forms: several keyed questions asked in one go (CubePi's multi-question ask). Each question
 * is answered on its own, by key: free text, one of its options, or (multi-select) an array of
 * them; `null` cancels that one question (the person skipped it) without cancelling the ask
 * or the run.
 */

/** One question of a form. */
export interface FormQuestion {
  /** The answer's key in the answers object: unique in the form, non-empty. */
  readonly key: string;
  readonly question: string;
  /** The answers to pick from; without them any text answers. */
  readonly options?: readonly string[];
  /** With options: the answer is an array of them (possibly empty). */
  readonly multiSelect?: boolean;
}

/** A form's answers, by key: every key of the form, `null` where that question was cancelled. */
export type FormAnswers = { readonly [key: string]: string | readonly string[] | null };

/** One question of a form as it is stored (a wait request's `detail.form`): multiSelect always a boolean. */
export interface StoredFormQuestion {
  readonly key: string;
  readonly question: string;
  readonly options?: readonly string[];
  readonly multiSelect: boolean;
}

/**
 * A form as given by a tool or a model, as it is stored.
 * @throws UserError for an empty form, a key that is empty or repeated, an empty question,
 * options that are not at least two distinct non-empty strings, or multiSelect without options.
 */
export function storedForm(form: readonly FormQuestion[], what: string): StoredFormQuestion[] {
  if (!Array.isArray(form) || form.length === 0) throw new UserError(`${what}: a form needs at least one question.`);
  const keys = new Set<string>();
  return form.map((q, i) => {
    const at = `${what}: form question ${i + 1}`;
    if (typeof q !== 'object' || q === null) throw new UserError(`${at} must be an object { key, question, options?, multiSelect? }.`);
    if (typeof q.key !== 'string' || q.key.length === 0) throw new UserError(`${at} needs a non-empty string 'key'.`);
    if (keys.has(q.key)) throw new UserError(`${at} repeats the key '${q.key}'; keys must be unique in a form.`);
    keys.add(q.key);
    if (typeof q.question !== 'string' || q.question.length === 0) throw new UserError(`${at} ('${q.key}') needs a non-empty string 'question'.`);
    if (q.options !== undefined && !(Array.isArray(q.options) && q.options.length >= 2 && q.options.every((o: unknown) => typeof o === 'string' && o.length > 0) && new Set(q.options).size === q.options.length)) {
      throw new UserError(`${at} ('${q.key}') has options that are not at least two distinct non-empty strings.`);
    }
    if (q.multiSelect === true && q.options === undefined) throw new UserError(`${at} ('${q.key}') is multiSelect without options.`);
    return { key: q.key, question: q.question, ...(q.options ? { options: [...q.options] } : {}), multiSelect: q.multiSelect === true };
  });
}

/**
 * Checks a form's answers: an object by key; each answer fits its question (see checkAnswer);
 * a missing key or `null` cancels that question. Returns the answers with every key present.
 * @throws UserError naming the first answer that does not fit, or a key the form does not have.
 */
export function checkFormAnswers(
  title: string,
  form: readonly StoredFormQuestion[],
  given: unknown,
  checkOne: (question: StoredFormQuestion, answer: unknown) => string | readonly string[],
): FormAnswers {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new UserError(`The answer to the form '${title}' must be an object by key (${form.map((q) => q.key).join(', ')}); null cancels one question.`);
  }
  const answers = given as Record<string, unknown>;
  for (const key of Object.keys(answers)) {
    if (!form.some((q) => q.key === key)) throw new UserError(`The form '${title}' has no question '${key}'; keys: ${form.map((q) => q.key).join(', ')}.`);
  }
  const out: Record<string, string | readonly string[] | null> = {};
  for (const question of form) {
    const answer = answers[question.key];
    out[question.key] = answer === undefined || answer === null ? null : checkOne(question, answer);
  }
  return out;
}

/** Whether a stored question detail is a form (has `form`). */
export function formOf(detail: Readonly<Record<string, unknown>>): readonly StoredFormQuestion[] | undefined {
  return Array.isArray(detail['form']) ? (detail['form'] as StoredFormQuestion[]) : undefined;
}
