import { z } from 'zod';
import { ToolError, UserError } from '../errors.js';
import { checkOptionKeys } from '../option-keys.js';
import { storedForm, type StoredFormQuestion } from '../runtime/human-form.js';
import { checkHumanAnswer, type HumanAnswer } from '../runtime/humans.js';
import { portOf } from './call-context.js';
import { waitForAnswer } from '../waits/answer-request.js';
import type { RunContext } from './context.js';
import { tool, type Tool } from './tool.js';

/**
 * Delivers a question to a person and resolves with their answer (a CLI prompt, a chat
 * message, a ticket, …). With `options`, the answer must be one of them (an array of them
 * for `multiSelect`). With `form` (the model asked several keyed questions; `question` is the
 * form's title), the answer is an object by key, `null` for a question the person cancelled.
 */
export type HumanChannel = (
  question: string,
  ctx: RunContext<any>,
  choices: { options?: readonly string[]; multiSelect: boolean; form?: readonly StoredFormQuestion[] },
) => Promise<HumanAnswer> | HumanAnswer;

export interface AskHumanOptions {
  /** Default "ask_human". */
  name?: string;
  description?: string;
  /** Give up waiting after this long (a tool timeout: the call gets an error result). Default: wait. */
  timeoutMs?: number;
}

const parameters = z.object({
  question: z.string().min(1).describe('One clear question.'),
  options: z.array(z.string().min(1)).min(2).optional().describe('Answers the person picks from, when the question has a fixed set.'),
  multiSelect: z.boolean().optional().describe('With options: the person may pick several (the answer is a list).'),
  questions: z
    .array(
      z.object({
        key: z.string().min(1).describe('The key of this answer in the result.'),
        question: z.string().min(1),
        options: z.array(z.string().min(1)).min(2).optional(),
        multiSelect: z.boolean().optional(),
      }),
    )
    .min(1)
    .optional()
    .describe('Several questions at once (a form; `question` is its title): the answer is an object by key, null where the person skipped one.'),
});

/**
 * A tool through which the model asks a person a question, optionally with options to pick
 * from (one, or several with `multiSelect`: the answer is then a JSON array). It is a barrier
 * (`parallel: false`): it waits for the calls in flight, and nothing runs while the person
 * thinks. An abort (cancel, timeout) stops waiting.
 *
 * Without a channel the question goes through the run: the stream gets `human_request`
 * (with `requestId`) and the answer comes from `handle.humans.answer(requestId, answer)`
 * (or `POST /api/chat/answer`), announced as `human_answer`.
 *
 * ```ts
 * const ask = askHuman(async (question) => (await rl.question(`${question}\n> `)).trim());
 * const viaRun = askHuman(); // answered through handle.humans
 * ```
 */
export function askHuman(channelOrOptions?: HumanChannel | AskHumanOptions, maybeOptions: AskHumanOptions = {}): Tool {
  const channel = typeof channelOrOptions === 'function' ? channelOrOptions : undefined;
  const options = typeof channelOrOptions === 'function' ? maybeOptions : (channelOrOptions ?? maybeOptions);
  checkOptionKeys(options, ['name', 'description', 'timeoutMs'], 'askHuman');
  return tool({
    name: options.name ?? 'ask_human',
    description:
      options.description ??
      'Ask the person you work for a question and wait for the answer. Use it when you need a decision or information only they have.',
    parameters,
    parallel: false,
    // With a channel the tool's own attempt times out; through the run, the question wait does.
    ...(channel ? { timeoutMs: options.timeoutMs } : {}),
    execute: async ({ question, options: choices, multiSelect, questions }, ctx) => {
      let form: StoredFormQuestion[] | undefined;
      try {
        form = questions ? storedForm(questions, 'ask_human') : undefined;
      } catch (error) {
        // The model's form (e.g. a repeated key) is its mistake to fix: an error result, not a failed run.
        throw new ToolError((error as Error).message);
      }
      const asked = { question, ...(choices && !form ? { options: choices } : {}), multiSelect: !form && choices !== undefined && multiSelect === true, ...(form ? { form } : {}) };
      let answer: HumanAnswer;
      if (channel) {
        const { question: _title, ...choicesOnly } = asked;
        const given = await untilAborted(Promise.resolve(channel(question, ctx, choicesOnly)), ctx.signal);
        if (typeof given !== 'string' && !Array.isArray(given) && !(form && typeof given === 'object' && given !== null)) {
          throw new ToolError(`the human channel answered with ${given === null ? 'null' : typeof given}, not ${form ? 'an object by key' : 'a string'}.`);
        }
        try {
          answer = checkHumanAnswer(asked, given);
        } catch (error) {
          throw new ToolError(`the human channel's answer does not fit: ${(error as Error).message}`);
        }
      } else {
        if (!portOf(ctx)) throw new UserError('askHuman without a channel can only run inside a troupe run.');
        // The call waits for the answer (a question wait: handle.humans.answer, POST /api/chat/answer, Runner.answer).
        return waitForAnswer(question, asked, options.timeoutMs);
      }
      return answer === '' ? '(no answer)' : answer;
    },
  });
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
