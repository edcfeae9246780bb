import { UserError } from '../errors.js';
import type { WaitRouter } from '../waits/wait-router.js';
import type { WaitView } from '../waits/wait-types.js';

/** The run (root or sub-run) an approval id `<runId>:<turn>.<index>` belongs to; '' for an id without one. */
export function runOfApproval(approvalId: string): string {
  return approvalId.slice(0, Math.max(0, approvalId.lastIndexOf(':')));
}

/**
 * Arguments an approver edited, as the JSON text the call will run with. Edits are kept as
 * text, like the model's own arguments, so the live run, the log and a resumed run all parse,
 * check and validate the same bytes (a decision binds to their hash).
 */
export interface EditedArguments {
  readonly arguments: string;
}

/**
 * The JSON text of an approver's edits (`{ args }`).
 * @throws UserError when `edits` is not `{ args }` or `args` cannot be written as JSON (a cycle, a BigInt, a function).
 */
export function editedArguments(edits: { args: unknown }): EditedArguments {
  if (typeof edits !== 'object' || edits === null || !('args' in edits)) {
    throw new UserError(`Edits of an approval must be { args: <JSON object> }, got ${edits === null ? 'null' : typeof edits}.`);
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(edits.args);
  } catch (error) {
    throw new UserError(`Edited arguments cannot be written as JSON: ${(error as Error).message}.`);
  }
  if (typeof text !== 'string') throw new UserError(`Edited arguments cannot be written as JSON (got ${typeof edits.args}).`);
  return { arguments: text };
}

/** A call waiting for a decision, anywhere in the run tree. */
export interface PendingApproval {
  /** Unique in the run tree: `<runId>:<turn>.<index>`. */
  readonly approvalId: string;
  /** The run whose call waits: the root run or a sub-run. */
  readonly runId: string;
  /** The model's call id (not unique: models reuse ids across turns and sub-runs). */
  readonly callId: string;
  readonly path: readonly string[];
  readonly agent: string;
  readonly tool: string;
  readonly args: unknown;
  readonly turn: number;
  /** Epoch ms. */
  readonly requestedAt: number;
}

/**
 * Names one waiting call: its approvalId; a bare callId when exactly one waiting call has
 * it; or the waiting run's id with the call id.
 */
export type ApprovalTarget = string | { readonly runId: string; readonly callId: string };

/** Who ended a wait. */
/** `record`: a decision found in the run's log (made before a restart, or by `Runner.decide`). */
export type DecidedBy = 'consumer' | 'handler' | 'timeout' | 'cancel' | 'error' | 'policy' | 'hook' | 'record';

export interface ApprovalOutcome {
  readonly approved: boolean;
  readonly by: DecidedBy;
  /** The reason given with a rejection; the model sees it. */
  readonly reason?: string;
  /** A beforeToolCall hook blocked the call, with this reason. */
  readonly blockedBy?: string;
  /** Arguments the approver edited, as JSON text (like the model's): parsed and validated again before the call runs. */
  readonly edits?: EditedArguments;
  /** A beforeToolCall hook threw: the call's error text. */
  readonly hookFailure?: string;
}

/**
 * The approval controls of a run tree (`handle.approvals`) over its wait inbox: approval waits
 * addressed by approval id, by a bare call id when exactly one waiting call has it, or by the
 * waiting run's id with the call id. Each decision goes to the wait itself, which resolves once.
 */
export class ApprovalInbox {
  constructor(private readonly waits: WaitRouter) {}

  /** Every waiting approval of the tree, in the order they opened. */
  pending(): PendingApproval[] {
    return this.waits.pending('approval').map(pendingApproval);
  }

  /**
   * The approval id a target names, or undefined when none matches.
   * @throws UserError when a bare call id matches more than one waiting call.
   */
  find(target: ApprovalTarget): string | undefined {
    const waiting = this.waits.pending('approval');
    if (typeof target !== 'string') return waiting.find((w) => w.runId === target.runId && w.callId === target.callId)?.waitId;
    if (waiting.some((w) => w.waitId === target)) return target;
    const byCall = waiting.filter((w) => w.callId === target);
    if (byCall.length > 1) {
      const list = byCall.map((w) => `${w.waitId} (run ${w.runId}, tool ${w.tool})`).join(', ');
      throw new UserError(`Call id '${target}' is waiting in ${byCall.length} places; decide by approvalId: ${list}.`);
    }
    return byCall[0]?.waitId;
  }

  /**
   * Decides one waiting call; false when nothing matches.
   * @throws UserError on an ambiguous call id, or edits whose `args` cannot be written as JSON (the wait stays open).
   */
  decide(target: ApprovalTarget, approved: boolean, reason?: string, edits?: { args: unknown }): boolean {
    const text = approved && edits !== undefined ? editedArguments(edits) : undefined;
    const approvalId = this.find(target);
    if (approvalId === undefined) return false;
    return this.waits.resolve(approvalId, { approved, ...(reason !== undefined ? { reason } : {}), ...(text ? { edits: text } : {}) });
  }

  /** Decides every waiting call; returns how many. */
  release(approved: boolean): number {
    const waiting = this.waits.pending('approval');
    for (const wait of waiting) this.waits.resolve(wait.waitId, { approved });
    return waiting.length;
  }

  /** Resolves with the decision once the named call is decided by anyone (false for a timeout or a cancel); undefined when it is not waiting; rejects with UserError when ambiguous. */
  settled(target: ApprovalTarget): Promise<boolean | undefined> {
    let approvalId: string | undefined;
    try {
      approvalId = this.find(target);
    } catch (error) {
      return Promise.reject(error);
    }
    if (approvalId === undefined) return Promise.resolve(undefined);
    return this.waits.settled(approvalId).then((outcome) => outcome?.ended !== 'timedOut' && (outcome?.resolution as { approved?: unknown } | undefined)?.approved === true);
  }

  /** Calls `listener` with every approval that starts waiting from now on, anywhere in the tree; returns an unsubscribe function. */
  onOpened(listener: (approval: PendingApproval) => void): () => void {
    return this.waits.onOpened((view) => {
      if (view.kind === 'approval') listener(pendingApproval(view));
    });
  }
}

/** An approval wait as `handle.approvals.pending()` lists it. */
export function pendingApproval(view: WaitView): PendingApproval {
  return { approvalId: view.waitId, runId: view.runId, callId: view.callId, path: view.path, agent: view.agent, tool: view.tool, args: view.detail['args'], turn: view.turn, requestedAt: view.requestedAt };
}
