import { ApprovalInbox, type ApprovalTarget, type PendingApproval } from './approvals.js';
import { humanRequest, type HumanAnswer, type HumanRequest } from './humans.js';
import type { WaitRouter } from '../waits/wait-router.js';
import type { WaitView } from '../waits/wait-types.js';

/**
 * Decisions for calls waiting anywhere in the run tree (sub-runs included), addressed by
 * approval id. A target is an approvalId, a bare call id when exactly one waiting call has
 * it, or `{ runId, callId }` of the run that waits.
 */
export interface ApprovalControls {
  /** Every waiting call of the tree. */
  pending(): PendingApproval[];
  /**
   * Approves; with `edits.args` (a JSON object) the call runs with those arguments instead,
   * validated again (invalid edits give the call an error result).
   * @returns false when nothing matches. @throws UserError when a bare call id is ambiguous (the message lists the approval ids).
   */
  approve(target: ApprovalTarget, edits?: { args: unknown }): boolean;
  /** Denies; the model sees `reason`. @returns false when nothing matches. @throws UserError when a bare call id is ambiguous. */
  reject(target: ApprovalTarget, reason?: string): boolean;
  /** Decides every waiting call at once; returns how many. */
  release(approved: boolean): number;
  /**
   * Resolves with the decision (true = approved) once the target is decided by anyone: the
   * consumer, the handler, a timeout or a cancel. Undefined when it is not waiting;
   * rejects with UserError when a bare call id is ambiguous.
   */
  settled(target: ApprovalTarget): Promise<boolean | undefined>;
  /**
   * Calls `listener` with each call that starts waiting from now on, anywhere in the tree
   * (also while the consumer is still reading earlier events). Returns an unsubscribe function.
   */
  onOpened(listener: (approval: PendingApproval) => void): () => void;
}

/** The approval controls over a run tree's inbox (closures, so they may be passed around unbound). */
export function approvalControls(waits: WaitRouter): ApprovalControls {
  const inbox = new ApprovalInbox(waits);
  return {
    pending: () => inbox.pending(),
    approve: (target, edits) => inbox.decide(target, true, undefined, edits),
    reject: (target, reason) => inbox.decide(target, false, reason),
    release: (approved) => inbox.release(approved),
    settled: (target) => inbox.settled(target),
    onOpened: (listener) => inbox.onOpened(listener),
  };
}

/** Questions a run tree's tools ask a person (askHuman without a channel). */
export interface HumanControls {
  pending(): HumanRequest[];
  /** @returns false when no question waits under `requestId`. @throws UserError when `answer` does not fit the question (it stays open). */
  answer(requestId: string, answer: HumanAnswer): boolean;
}

export function humanControls(waits: WaitRouter): HumanControls {
  return {
    pending: () => waits.pending('question').map(humanRequest),
    answer: (requestId, answer) => waits.pending('question').some((w) => w.waitId === requestId) && waits.resolve(requestId, answer),
  };
}

/** Every wait of a run tree, whatever its kind. */
export interface WaitControls {
  pending(): WaitView[];
  /**
   * Resolves the open wait `waitId` with `resolution`, as its kind takes it.
   * @returns false when no wait is open under that id. @throws UserError when it does not fit (the wait stays open).
   */
  resolve(waitId: string, resolution: unknown): boolean;
}

export function waitControls(waits: WaitRouter): WaitControls {
  return { pending: () => waits.pending(), resolve: (waitId, resolution) => waits.resolve(waitId, resolution) };
}
