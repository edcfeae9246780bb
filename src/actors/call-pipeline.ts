import { BudgetExceeded, InvalidToolArguments, RunCancelled, ToolTimeout, TroupeError } from '../errors.js';
import type { CallContext } from '../tools/call-context.js';
import { defaultRender, errorText, formatToolError, renderSuccess, type Rendered } from '../tools/render.js';
import { isToolResult } from '../tools/result.js';
import type { ResultRenderer, Tool } from '../tools/tool.js';
import { truncateOutput } from '../tools/truncate.js';
import { validateArguments } from '../tools/validate.js';
import { hasMedia, looksLikeContentParts, partsText, type ContentPart } from '../message-parts.js';
import { waitKind } from '../waits/kinds/index.js';
import type { WaitInput } from '../waits/wait.machine.js';
import { isWaitRequest, type WaitOutcome, type WaitRequest, type WaitView } from '../waits/wait-types.js';

/** Everything one tool-call actor needs; built by the run core at dispatch. */
export interface CallJob {
  readonly tool: Tool;
  /** Raw parsed arguments from the model (what policies see). */
  readonly raw: Record<string, unknown>;
  /** Arguments preflight already validated; reused by the first attempt when no policy can change them. */
  readonly validated: unknown;
  readonly ctx: CallContext<any>;
  readonly retries: number;
  readonly timeoutMs: number | undefined;
  readonly maxOutputChars: number | null;
  readonly agentRenderer: ResultRenderer | undefined;
  onAttemptFailed(error: Error, attempt: number, willRetry: boolean): void;
  /** afterToolCall hooks, applied to the call's outcome; undefined when the agent has none. Never rejects. */
  readonly reshape: ((outcome: CallOutcome) => Promise<CallOutcome>) | undefined;
  /** The wait machine's input for a wait the tool returned (or the call resumes; `askId`: one its body asked): the run's view of it, its inbox and its log. */
  openWait(request: WaitRequest, askId?: string): WaitInput;
  /** A call resumed while it waited: its stored wait opens again instead of the tool running (again). */
  readonly resumedWait?: WaitRequest;
}

export interface CallOutcome {
  readonly result: unknown;
  readonly output: string;
  readonly isError: boolean;
  readonly details: unknown;
  readonly terminate: boolean;
  /** Set when the failure must reach the run: RunCancelled ends it, BudgetExceeded stops it. */
  readonly runSignal?: RunCancelled | BudgetExceeded;
  /** A beforeToolCall hook blocked the call (it never ran). */
  readonly blockedBy?: string;
  /** Content parts of a successful result (`output` is their text projection). */
  readonly parts?: readonly ContentPart[];
  /** The tool returned a wait (`waitForEvent`, `waitUntil`, a question): the call's result comes when it ends. */
  readonly wait?: WaitRequest;
}

/** Backoff before attempt n+1 after attempt n failed: min(5000, 100·2^(n-1)) ms, no jitter. */
export function retryDelayMs(failedAttempt: number): number {
  return Math.min(5000, 100 * 2 ** (failedAttempt - 1));
}

/**
 * Runs a call to its single outcome: retries wrap the whole policy chain, each attempt
 * gets a fresh shallow copy of the arguments and its own timeout. Never rejects.
 */
export function executeCall(job: CallJob): Promise<CallOutcome> {
  // Most calls have no retries, timeout or policies: run them without building the chain, and
  // without an async function's frame kept for every call while its tool runs (W4 memory).
  if (job.retries === 0 && job.timeoutMs === undefined && job.tool.policies.length === 0) {
    let value: unknown;
    try {
      value = job.tool.execute(job.validated, job.ctx);
    } catch (caught) {
      return Promise.resolve(failed(job, caught, 1, 1)!); // one attempt of one: never retried
    }
    return Promise.resolve(value).then(
      (returned) => {
        try {
          return finish(job, returned);
        } catch (caught) {
          return failed(job, caught, 1, 1)!;
        }
      },
      (caught: unknown) => failed(job, caught, 1, 1)!,
    );
  }
  return executeWithRetries(job);
}

/** A call with retries, a timeout or policies: each attempt runs the whole chain. Never rejects. */
async function executeWithRetries(job: CallJob): Promise<CallOutcome> {
  const attempts = 1 + job.retries;
  for (let attempt = 1; ; attempt++) {
    try {
      const value = await runAttempt(job, attempt);
      return finish(job, value);
    } catch (caught) {
      const outcome = failed(job, caught, attempt, attempts);
      if (outcome) return outcome;
      await sleep(job.tool.retryBackoffMs?.(attempt) ?? retryDelayMs(attempt), job.ctx.signal);
    }
  }
}

/** Reports a failed attempt; returns the call's outcome unless another attempt follows. */
function failed(job: CallJob, caught: unknown, attempt: number, attempts: number): CallOutcome | undefined {
  const error = caught instanceof Error ? caught : new TroupeError(errorText(caught), { cause: caught });
  const final = error instanceof RunCancelled || error instanceof BudgetExceeded || error instanceof InvalidToolArguments;
  const willRetry = !final && attempt < attempts && !job.ctx.signal.aborted;
  job.onAttemptFailed(error, attempt, willRetry);
  if (willRetry) return undefined;
  const runSignal = error instanceof RunCancelled || error instanceof BudgetExceeded ? error : undefined;
  return { result: undefined, output: cap(job, formatToolError(error)), isError: true, details: undefined, terminate: false, runSignal };
}

function runAttempt(job: CallJob, attempt: number): Promise<unknown> {
  const { tool, ctx } = job;
  const innermost = (args: unknown): Promise<unknown> =>
    // Validation sits at the function boundary, inside every policy.
    Promise.resolve(tool.execute(args === job.raw ? job.validated : validateArguments(tool, args), ctx));
  let chain: (args: unknown) => Promise<unknown> = innermost;
  for (let i = tool.policies.length - 1; i >= 0; i--) {
    const policy = tool.policies[i]!;
    const next = chain;
    chain = (args) => Promise.resolve(policy((a) => next(a), args, ctx));
  }
  // The first attempt without policies reuses preflight's validation; anything else starts from a fresh copy.
  const args = attempt === 1 && tool.policies.length === 0 ? job.raw : { ...job.raw };
  if (job.timeoutMs === undefined) return invoke(chain, args);
  return withTimeout(job, chain, args);
}

async function invoke(chain: (args: unknown) => Promise<unknown>, args: unknown): Promise<unknown> {
  return chain(args);
}

async function withTimeout(job: CallJob, chain: (args: unknown) => Promise<unknown>, args: unknown): Promise<unknown> {
  const { ctx } = job;
  const runSignal = ctx.signal;
  const controller = new AbortController();
  const forward = (): void => controller.abort(runSignal.reason);
  if (runSignal.aborted) controller.abort(runSignal.reason);
  else runSignal.addEventListener('abort', forward, { once: true });
  ctx.attemptSignal = controller.signal;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      invoke(chain, args),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const error = new ToolTimeout(job.tool.name, job.timeoutMs!);
          controller.abort(error);
          reject(error);
        }, job.timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    runSignal.removeEventListener('abort', forward);
    ctx.attemptSignal = undefined;
  }
}

/** The outcome of a returned value; a Promise only when a renderer is async. Never rejects. */
function finish(job: CallJob, value: unknown): CallOutcome | Promise<CallOutcome> {
  if (isWaitRequest(value)) return { result: undefined, output: '', isError: false, details: undefined, terminate: false, wait: value };
  if (isToolResult(value)) {
    const { content } = value;
    if (value.isError) {
      // Error results bypass renderers; parts of an error are sent as their text.
      const text = looksLikeContentParts(content) ? partsText(content as ContentPart[]) : defaultRender(content);
      return { result: undefined, output: cap(job, text), isError: true, details: value.details, terminate: value.terminate === true };
    }
    const terminate = value.terminate === true;
    if (typeof content === 'string') return shape(job, content, { output: content, isError: false }, value.details, terminate);
    if (looksLikeContentParts(content)) return withParts(job, content as ContentPart[], value.details, terminate);
    return shaped(job, content, renderSuccess(content, job.ctx, job.tool.resultRenderer, job.agentRenderer), value.details, terminate);
  }
  return shaped(job, value, renderSuccess(value, job.ctx, job.tool.resultRenderer, job.agentRenderer), undefined, false);
}

function shaped(job: CallJob, raw: unknown, rendered: Rendered | Promise<Rendered>, details: unknown, terminate: boolean): CallOutcome | Promise<CallOutcome> {
  if (rendered instanceof Promise) return rendered.then((r) => shape(job, raw, r, details, terminate));
  return shape(job, raw, rendered, details, terminate);
}

function shape(job: CallJob, raw: unknown, rendered: Rendered, details: unknown, terminate: boolean): CallOutcome {
  const { text, truncated } = truncateOutput(rendered.output, job.maxOutputChars);
  // A truncated result drops its raw value, so huge payloads never outlive the call.
  const result = rendered.isError || truncated ? undefined : raw;
  return { result, output: text, isError: rendered.isError, details, terminate: terminate && !rendered.isError };
}

/** A parts result (checked by toolResult): over maxOutputChars, only its truncated text projection is kept (no parts). */
function withParts(job: CallJob, parts: readonly ContentPart[], details: unknown, terminate: boolean): CallOutcome {
  const { text, truncated } = truncateOutput(partsText(parts), job.maxOutputChars);
  if (truncated) return { result: undefined, output: text, isError: false, details, terminate };
  // Text-only parts say nothing their text does not: the result is plain text.
  return hasMedia(parts) ? { result: parts, output: text, isError: false, details, terminate, parts } : { result: parts, output: text, isError: false, details, terminate };
}

function cap(job: CallJob, text: string): string {
  return truncateOutput(text, job.maxOutputChars).text;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * The outcome of a call whose wait ended: its kind makes the tool's value (rendered as a
 * returned value is) or an error result (a timeout). Never rejects.
 */
export function waitedOutcome(job: CallJob, view: WaitView, outcome: WaitOutcome): CallOutcome | Promise<CallOutcome> {
  const made = waitKind(view.kind).callResult(view, outcome);
  if ('error' in made) return failed(job, made.error, 1, 1)!;
  try {
    return finish(job, made.value);
  } catch (caught) {
    return failed(job, caught, 1, 1)!;
  }
}
