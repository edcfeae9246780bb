import { UserError } from '../errors.js';

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

/** One open wait, registered by the run that owns it; only the wait itself resolves it. */
export interface ApprovalWait {
  readonly view: PendingApproval;
  /** Ends the wait (first call wins; later calls do nothing). */
  decide(approved: boolean, by: DecidedBy, reason?: string, edits?: EditedArguments): void;
  /** The stream consumer pulled past the request without deciding. */
  consumerPassed(): void;
  /** Nobody will read the stream any more. */
  consumerLeft(): void;
}

/**
 * The approval inbox of one run tree. It only routes: a decision addressed by approval id
 * (or by run id + call id) reaches exactly the wait that registered under it. Each wait
 * owns its own timeout, abort and "resolved once"; the router never decides on its own.
 */
export class ApprovalRouter {
  // Created on first use: most runs never wait for an approval (W4 memory: one map fewer per run each).
  private waits: Map<string, ApprovalWait> | undefined;
  private watchers: Map<string, Array<(approved: boolean) => void>> | undefined;
  /** Nobody reads the stream: new waits cannot be answered by a consumer. */
  consumerGone = false;
  /** Approval events are passed to the handler at once (result() without an iterator). */
  passImmediately = false;

  private openedListeners: Set<(approval: PendingApproval) => void> | undefined;

  register(wait: ApprovalWait): void {
    (this.waits ??= new Map()).set(wait.view.approvalId, wait);
    if (this.openedListeners) for (const listener of this.openedListeners) {
      try {
        listener(wait.view);
      } catch {
        // a broken listener must not break the wait
      }
    }
  }

  /** Calls `listener` with every wait that opens from now on, anywhere in the tree; returns an unsubscribe function. */
  onOpened(listener: (approval: PendingApproval) => void): () => void {
    const listeners = (this.openedListeners ??= new Set());
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }

  /** Called by the wait when it resolves. */
  settle(approvalId: string, approved: boolean): void {
    if (!this.waits?.delete(approvalId)) return;
    const watchers = this.watchers?.get(approvalId);
    this.watchers?.delete(approvalId);
    for (const watch of watchers ?? []) watch(approved);
  }

  /** Whether a wait is open under this approval id. */
  isWaiting(approvalId: string): boolean {
    return this.waits?.has(approvalId) === true;
  }

  pending(): PendingApproval[] {
    return this.waits ? [...this.waits.values()].map((w) => w.view) : [];
  }

  /**
   * The wait a target names, or undefined when none matches.
   * @throws UserError when a bare call id matches more than one waiting call.
   */
  find(target: ApprovalTarget): ApprovalWait | undefined {
    if (!this.waits) return undefined;
    if (typeof target !== 'string') {
      for (const wait of this.waits.values()) if (wait.view.runId === target.runId && wait.view.callId === target.callId) return wait;
      return undefined;
    }
    const exact = this.waits.get(target);
    if (exact) return exact;
    const byCall = [...this.waits.values()].filter((w) => w.view.callId === target);
    if (byCall.length > 1) {
      const list = byCall.map((w) => `${w.view.approvalId} (run ${w.view.runId}, tool ${w.view.tool})`).join(', ');
      throw new UserError(`Call id '${target}' is waiting in ${byCall.length} places; decide by approvalId: ${list}.`);
    }
    return byCall[0];
  }

  /**
   * Decides one waiting call; false when nothing matches.
   * @throws UserError on an ambiguous call id, or edits whose `args` cannot be written as JSON (the wait stays open).
   */
  decide(target: ApprovalTarget, approved: boolean, reason?: string, edits?: { args: unknown }): boolean {
    const text = approved && edits !== undefined ? editedArguments(edits) : undefined;
    const wait = this.find(target);
    if (!wait) return false;
    wait.decide(approved, 'consumer', reason, text);
    return true;
  }

  /** Decides every waiting call; returns how many. */
  release(approved: boolean): number {
    const waits = this.waits ? [...this.waits.values()] : [];
    for (const wait of waits) wait.decide(approved, 'consumer');
    return waits.length;
  }

  /** Resolves with the decision once the named call is decided by anyone; undefined when it is not waiting; rejects with UserError when ambiguous. */
  settled(target: ApprovalTarget): Promise<boolean | undefined> {
    let wait: ApprovalWait | undefined;
    try {
      wait = this.find(target);
    } catch (error) {
      return Promise.reject(error);
    }
    if (!wait) return Promise.resolve(undefined);
    const id = wait.view.approvalId;
    return new Promise((resolve) => {
      const watchers = (this.watchers ??= new Map());
      const list = watchers.get(id) ?? [];
      list.push(resolve);
      watchers.set(id, list);
    });
  }

  /** The consumer pulled past the request event of `approvalId`. */
  passed(approvalId: string): void {
    this.waits?.get(approvalId)?.consumerPassed();
  }

  /** Nobody will read events any more: "ask" can no longer be answered, so it denies. */
  consumerLeft(): void {
    this.consumerGone = true;
    if (this.waits) for (const wait of [...this.waits.values()]) wait.consumerLeft();
  }
}
