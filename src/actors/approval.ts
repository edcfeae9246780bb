import { fromPromise } from 'xstate';
import type { ApprovalHandler, ApprovalRequest } from '../agent.js';
import { asError } from '../errors.js';
import { approvalNeeded, handlerVerdict } from '../rules/approval.js';
import { editedArguments, type ApprovalOutcome, type ApprovalRouter, type EditedArguments, type PendingApproval } from '../runtime/approvals.js';
import type { RunContext } from '../tools/context.js';
import type { Tool } from '../tools/tool.js';

export interface ApprovalInput {
  /** The request as the waiting run describes it (requestedAt is stamped when the wait opens). */
  readonly view: Omit<PendingApproval, 'requestedAt'>;
  readonly tool: Tool;
  readonly args: unknown;
  readonly ctx: RunContext<any>;
  readonly request: ApprovalRequest;
  readonly handler: ApprovalHandler | undefined;
  readonly timeoutMs: number | undefined;
  readonly router: ApprovalRouter;
  /** Emits approval_required; `decide` is this wait's own decision function. */
  announce(view: PendingApproval, decide: (approved: boolean, reason?: string, edits?: { args: unknown }) => void): void;
  /** A predicate or handler threw: emitted as tool_call_failed before the denial. */
  reportFailure(error: Error): void;
  /** beforeToolCall hooks: a block reason, or undefined to go on. May throw. */
  block?(): Promise<string | undefined>;
  /**
   * A decision recorded in the run's log for exactly these arguments (resume, `Runner.decide`):
   * it applies without asking, with the edited arguments it was made with.
   */
  readonly recorded?: { readonly approved: boolean; readonly reason?: string; readonly edits?: EditedArguments };
  /** When the stored request of this wait was made (resume): the timeout counts from there. */
  readonly requestedAt?: number;
  /** The wait opened (after the predicate said it is needed): the run is told, and logs the request. Must not throw. */
  onOpened?(view: PendingApproval): void;
  /**
   * The run parks at this wait when nobody here decides it (a durable root run with
   * suspendOnWait or handle.suspend()): then no handler and no consumer mean "keep
   * waiting" (the decision comes from `Runner.decide`), not "deny". Must not throw.
   */
  parks?(): boolean;
}

/**
 * One approval wait, from the `needsApproval` predicate to its single outcome. Order of
 * authority: the stream consumer (ev.approve/reject, handle.approvals), then the agent's
 * approvalHandler once the consumer has moved past the request, else deny. Fails closed on
 * a throwing predicate or handler, on timeout, on abort (the run left the wait) and when an
 * "ask" can no longer be answered. Never rejects; resolves exactly once.
 */
export async function decideApproval(input: ApprovalInput, signal: AbortSignal): Promise<ApprovalOutcome> {
  const { tool, router } = input;
  if (input.block) {
    try {
      const reason = await input.block();
      if (reason !== undefined) return { approved: false, by: 'hook', blockedBy: reason };
    } catch (error) {
      const failure = asError(error);
      input.reportFailure(failure);
      return { approved: false, by: 'error', hookFailure: `beforeToolCall hook failed: ${failure.message || failure.name}` };
    }
  }
  let needed: boolean;
  try {
    needed = approvalNeeded(typeof tool.needsApproval === 'function' ? await tool.needsApproval(input.args, input.ctx) : tool.needsApproval);
  } catch (error) {
    input.reportFailure(asError(error));
    return { approved: false, by: 'error' };
  }
  if (!needed) return { approved: true, by: 'policy' };
  if (input.recorded) {
    const { approved, reason, edits } = input.recorded;
    return { approved, by: 'record', ...(reason !== undefined ? { reason } : {}), ...(approved && edits ? { edits } : {}) };
  }
  if (signal.aborted) return { approved: false, by: 'cancel' };
  return new Promise<ApprovalOutcome>((resolve) => {
    const view: PendingApproval = { ...input.view, requestedAt: input.requestedAt ?? Date.now() };
    let done = false;
    let handlerAsked = false;
    let leftToConsumer = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (approved: boolean, by: ApprovalOutcome['by'], reason?: string, edits?: EditedArguments): void => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      router.settle(view.approvalId, approved);
      const outcome: ApprovalOutcome = { approved, by, ...(reason !== undefined ? { reason } : {}), ...(approved && edits ? { edits } : {}) };
      resolve(outcome);
    };
    const askHandler = async (): Promise<void> => {
      if (handlerAsked || done) return;
      handlerAsked = true;
      let answer: unknown;
      try {
        answer = input.handler ? await input.handler(input.request, input.ctx) : undefined;
      } catch (error) {
        if (done) return;
        input.reportFailure(asError(error));
        return finish(false, 'error');
      }
      const parks = input.parks?.() === true;
      // Without a handler, a parking run waits for the decision from another process instead of denying.
      const verdict = !input.handler && parks ? 'ask' : handlerVerdict(answer);
      if (verdict === 'allow') return finish(true, 'handler');
      // "ask" leaves the call waiting for an out-of-band decision, but only while someone can give one.
      if (verdict === 'ask' && (!router.consumerGone || parks)) {
        leftToConsumer = true;
        return;
      }
      finish(false, 'handler');
    };
    const onAbort = (): void => finish(false, 'cancel');
    signal.addEventListener('abort', onAbort, { once: true });
    // A durable wait's timeout counts from its stored request time, across restarts.
    if (input.timeoutMs !== undefined) timer = setTimeout(() => finish(false, 'timeout'), Math.max(0, input.timeoutMs - (Date.now() - view.requestedAt)));
    router.register({
      view,
      decide: finish,
      consumerPassed: () => void askHandler(),
      consumerLeft: () => (!leftToConsumer ? void askHandler() : input.parks?.() === true ? undefined : finish(false, 'handler')),
    });
    input.onOpened?.(view);
    // Edits become JSON text here, so a value that cannot be logged throws at approve() and the wait stays open.
    input.announce(view, (approved, reason, edits) => finish(approved, 'consumer', reason, approved && edits !== undefined ? editedArguments(edits) : undefined));
    if (router.consumerGone || router.passImmediately) void askHandler();
  });
}

/** The approval wait as an actor: leaving the state (cancel) aborts it, which denies. */
export const approvalActor = fromPromise<ApprovalOutcome, ApprovalInput>(({ input, signal }) => decideApproval(input, signal));
