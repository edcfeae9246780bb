import { UserError } from '../errors.js';

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
  readonly requestedAt: number;
}

export type HumanAnswer = string | readonly string[];

interface Wait {
  readonly view: HumanRequest;
  resolve(answer: HumanAnswer): void;
}

/**
 * The question inbox of one run tree: it routes an answer addressed by request id to the
 * one tool waiting for it, after checking it against the question's options. Each wait ends
 * exactly once (answered, or aborted with its call).
 */
export class HumanRouter {
  // Created on first question: most runs never ask one.
  private waitsMap: Map<string, Wait> | undefined;

  private get waits(): Map<string, Wait> {
    return (this.waitsMap ??= new Map());
  }

  /** Opens a question; resolves with the checked answer, rejects with the signal's reason on abort. */
  ask(view: HumanRequest, signal: AbortSignal): Promise<HumanAnswer> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<HumanAnswer>((resolve, reject) => {
      const onAbort = (): void => {
        this.waits.delete(view.requestId);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waits.set(view.requestId, {
        view,
        resolve: (answer) => {
          signal.removeEventListener('abort', onAbort);
          this.waits.delete(view.requestId);
          resolve(answer);
        },
      });
    });
  }

  pending(): HumanRequest[] {
    return this.waitsMap ? [...this.waitsMap.values()].map((w) => w.view) : [];
  }

  /**
   * Answers a waiting question. @returns false when no question waits under that id.
   * @throws UserError when the answer does not fit the question (not one of its options, not
   * an array for a multi-select, not a string) — nothing is answered then.
   */
  answer(requestId: string, answer: unknown): boolean {
    const wait = this.waitsMap?.get(requestId);
    if (!wait) return false;
    wait.resolve(checkAnswer(wait.view, answer));
    return true;
  }
}

/** Checks an answer against a question's options. @throws UserError when it does not fit. */
export function checkAnswer(view: Pick<HumanRequest, 'question' | 'options' | 'multiSelect'>, answer: unknown): HumanAnswer {
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
