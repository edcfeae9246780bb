import { TroupeError, UserError } from '../../errors.js';
import { editedArguments, type EditedArguments } from '../../runtime/approvals.js';
import type { WaitKind } from './wait-kind.js';

/** An approval's resolution, as its wait and the log keep it. */
export interface ApprovalResolution {
  readonly approved: boolean;
  /** With a denial: what the model is told. */
  readonly reason?: string;
  /** With an approval: the arguments the call runs with instead of the model's (JSON text). */
  readonly edits?: EditedArguments;
}

/**
 * Whether a call may run (the approval step of preflight): detail `{ tool, args }`; resolution
 * `{ approved, reason?, edits? }`. The run's chart applies the outcome (denied: an error
 * result; approved: the call runs, with the edits), so it has no call result of its own; it is
 * announced by the run's `approval_required`, and logged as approval_request / approval_decision.
 */
export const approvalKind: WaitKind = {
  name: 'approval',
  atDeadline: 'timeout',
  resolution: (view, given) => approvalResolution(given, `approval '${view.waitId}'`),
  callResult: () => ({ error: new TroupeError('an approval has no call result of its own: the run applies its decision') }),
  openedEvent: () => undefined,
  resolvedEvent: () => undefined,
  detailIssue: (detail) => (typeof detail['tool'] === 'string' ? undefined : "needs a string 'tool'"),
  resolutionIssue: (resolution) => (typeof (resolution as { approved?: unknown } | null)?.approved === 'boolean' ? undefined : 'must be { approved: boolean }'),
};

/**
 * A decision as given (`{ approved, reason?, edits? }` from the handle, `{ approved, reason?, args? }` from
 * another process), as it is kept. @throws UserError when it does not fit.
 */
export function approvalResolution(given: unknown, what: string): ApprovalResolution {
  const value = given as { approved?: unknown; reason?: unknown; edits?: unknown; args?: unknown } | null;
  if (typeof value !== 'object' || value === null || typeof value.approved !== 'boolean') throw new UserError(`A decision for ${what} needs { approved: boolean }, got ${JSON.stringify(given)}.`);
  if (value.reason !== undefined && typeof value.reason !== 'string') throw new UserError(`The reason of a decision for ${what} must be a string.`);
  let edits: EditedArguments | undefined;
  if (value.edits !== undefined) edits = value.edits as EditedArguments;
  else if (value.args !== undefined) edits = editedArguments({ args: value.args });
  if (edits && !value.approved) throw new UserError('Edited args are only allowed with approved: true.');
  return { approved: value.approved, ...(value.reason !== undefined ? { reason: value.reason } : {}), ...(edits ? { edits } : {}) };
}
