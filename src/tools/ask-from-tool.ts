/**
 * Asking a person from inside a tool's body (CubePi's `ask` / `confirm` in a tool): the call
 * opens a question wait (the same wait machine, inbox, events and log entries as askHuman's),
 * and the body awaits the answer and keeps running. Each ask of a call has its own id
 * (`<runId>:<turn>.<index>:ask.<n>`, n counting from 0 per execution of the call).
 *
 * The answer ledger: a durable run parks while a body waits (`checkpoint.suspendOnWait`);
 * its body is then abandoned (its signal aborts). An answer given while it is parked
 * (`Runner.answer`) is stored in the run's log; on resume the call runs its tool again from
 * the start, and each ask that was answered gets its stored answer at once, in order, without
 * asking again: every stored answer is applied exactly once, to the ask it answers. A body
 * that asks must therefore ask the same questions in the same order when it runs again (do
 * side effects after the answers, or make them idempotent).
 */
import { RunCancelled, UserError, WaitTimeout, abortReason } from '../errors.js';
import { checkOptionKeys } from '../option-keys.js';
import { storedForm, type FormAnswers, type FormQuestion } from '../runtime/human-form.js';
import type { HumanAnswer } from '../runtime/humans.js';
import { waitForAnswer } from '../waits/answer-request.js';
import type { WaitOutcome } from '../waits/wait-types.js';
import { CallContext, portOf } from './call-context.js';
import type { RunContext } from './context.js';

export interface AskFromToolOptions {
  /** The answers to pick from (at least two); without them any text answers. */
  readonly options?: readonly string[];
  /** With options: the person may pick several (the answer is an array). */
  readonly multiSelect?: boolean;
  /** Give up after this long (ms): the ask rejects with WaitTimeout. Default: wait. */
  readonly timeoutMs?: number;
}

/** How many asks each call's context made (the next ask's number). */
const asksMade = new WeakMap<CallContext<any>, number>();

/**
 * Asks a person `question` from inside a tool's `execute` and resolves with the answer (a
 * string, or an array of options with `multiSelect`). Announced as `human_request`, answered
 * with `handle.humans.answer(requestId, answer)`, `POST /api/chat/answer` or, for a parked
 * run, `Runner.answer`.
 * @throws UserError (synchronously) outside a troupe run's tool, for bad options, or while another ask of the same call waits.
 * Rejects with WaitTimeout after `timeoutMs`, or with the run's abort reason (RunCancelled) when the run is cancelled or parks.
 */
export function askFromTool(ctx: RunContext<any>, question: string, options: AskFromToolOptions = {}): Promise<string | readonly string[]> {
  checkOptionKeys(options, ['options', 'multiSelect', 'timeoutMs'], 'askFromTool');
  if (typeof question !== 'string' || question.length === 0) throw new UserError(`askFromTool needs a non-empty question, got ${JSON.stringify(question)}.`);
  const choices = options.options;
  if (choices !== undefined) storedForm([{ key: 'answer', question, options: choices }], 'askFromTool');
  if (options.multiSelect === true && choices === undefined) throw new UserError('askFromTool: multiSelect needs options.');
  return ask(ctx, 'askFromTool', question, { ...(choices ? { options: [...choices] } : {}), multiSelect: choices !== undefined && options.multiSelect === true }, options.timeoutMs) as Promise<string | readonly string[]>;
}

/**
 * Asks a person several keyed questions at once (a form titled `title`) from inside a tool's
 * `execute`; resolves with the answers by key, `null` for each question the person cancelled
 * (the others still count; the run goes on).
 * @throws UserError (synchronously) as askFromTool, and for a form that is empty or repeats a key. Rejects as askFromTool.
 */
export function askFormFromTool(ctx: RunContext<any>, title: string, form: readonly FormQuestion[], options: { readonly timeoutMs?: number } = {}): Promise<FormAnswers> {
  checkOptionKeys(options, ['timeoutMs'], 'askFormFromTool');
  if (typeof title !== 'string' || title.length === 0) throw new UserError(`askFormFromTool needs a non-empty title, got ${JSON.stringify(title)}.`);
  return ask(ctx, 'askFormFromTool', title, { multiSelect: false, form: storedForm(form, 'askFormFromTool') }, options.timeoutMs) as Promise<FormAnswers>;
}

/**
 * Asks a person to confirm `question` (options "yes" / "no") from inside a tool's `execute`;
 * resolves true for "yes". Rejects as askFromTool.
 */
export async function confirmFromTool(ctx: RunContext<any>, question: string, options: { readonly timeoutMs?: number } = {}): Promise<boolean> {
  checkOptionKeys(options, ['timeoutMs'], 'confirmFromTool');
  return (await askFromTool(ctx, question, { options: ['yes', 'no'], ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}) })) === 'yes';
}

function ask(ctx: RunContext<any>, who: string, question: string, choices: Parameters<typeof waitForAnswer>[1], timeoutMs: number | undefined): Promise<HumanAnswer> {
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))) throw new UserError(`${who}: timeoutMs must be a positive number of ms, got ${String(timeoutMs)}.`);
  const call = ctx instanceof CallContext ? (ctx as CallContext<any>) : undefined;
  const actor = call && portOf(call) ? call.actor : undefined;
  if (!call || !actor) throw new UserError(`${who} can only run inside a troupe run, in a tool's execute.`);
  if ((actor.getSnapshot() as { wait?: unknown }).wait !== undefined) throw new UserError(`${who}: this call already waits for an answer; await one ask before the next.`);
  const signal = ctx.signal;
  if (signal.aborted || actor.getSnapshot().status !== 'active') return Promise.reject(signal.aborted ? signal.reason : new RunCancelled('the call has ended'));
  const n = asksMade.get(call) ?? 0;
  asksMade.set(call, n + 1);
  const request = waitForAnswer(question, choices, timeoutMs);
  return new Promise<HumanAnswer>((resolve, reject) => {
    // Parked or cancelled: the call's actor withdraws the wait; the body gets the abort reason.
    const onAbort = (): void => reject(signal.reason ?? new RunCancelled(abortReason(signal)));
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = (outcome: WaitOutcome): void => {
      signal.removeEventListener('abort', onAbort);
      if (outcome.ended === 'timedOut') reject(new WaitTimeout(`no answer to '${question}' within ${timeoutMs} ms`));
      else resolve(outcome.resolution as HumanAnswer);
    };
    actor.send({ type: 'wait', request, ask: { id: `ask.${n}`, settle } });
  });
}
