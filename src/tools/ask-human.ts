import { z } from 'zod';
import { ToolError } from '../errors.js';
import type { RunContext } from './context.js';
import { tool, type Tool } from './tool.js';

/** Delivers a question to a person and resolves with their answer (a CLI prompt, a chat message, a ticket, …). */
export type HumanChannel = (question: string, ctx: RunContext<any>) => Promise<string> | string;

export interface AskHumanOptions {
  /** Default "ask_human". */
  name?: string;
  description?: string;
  /** Give up waiting after this long (a tool timeout: the call gets an error result). Default: wait. */
  timeoutMs?: number;
}

/**
 * A tool through which the model asks a person a question. It is a barrier
 * (`parallel: false`): it waits for the calls in flight, and nothing runs while the
 * person thinks. The answer is the tool result; an abort (cancel, timeout) stops waiting.
 *
 * ```ts
 * const ask = askHuman(async (question) => (await rl.question(`${question}\n> `)).trim());
 * ```
 */
export function askHuman(channel: HumanChannel, options: AskHumanOptions = {}): Tool {
  return tool({
    name: options.name ?? 'ask_human',
    description:
      options.description ??
      'Ask the person you work for a question and wait for the answer. Use it when you need a decision or information only they have.',
    parameters: z.object({ question: z.string().min(1).describe('One clear question.') }),
    parallel: false,
    timeoutMs: options.timeoutMs,
    execute: async ({ question }, ctx) => {
      const answer = await untilAborted(Promise.resolve(channel(question, ctx)), ctx.signal);
      if (typeof answer !== 'string') throw new ToolError(`the human channel answered with ${answer === null ? 'null' : typeof answer}, not a string.`);
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
