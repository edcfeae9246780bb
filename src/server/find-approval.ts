import { HttpError } from './http.js';
import type { PendingApprovalView, ServerRun } from './runs.js';

/** Which waiting call a `POST /api/chat/approve` body means. */
export interface ApprovalQuery {
  readonly approvalId?: string | undefined;
  /** The server (root) run id or the id of the sub-run that waits. */
  readonly runId?: string | undefined;
  readonly callId?: string | undefined;
}

export interface ApprovalTarget {
  /** The server run whose tree holds the call. */
  readonly run: ServerRun;
  readonly approval: PendingApprovalView;
}

/**
 * Finds the one waiting call `query` names among `runs` (the live server runs):
 *
 * - `approvalId`: the call with that approval id; `runId`, if given, must be its server
 *   run's id or the waiting run's id, and `callId`, if given, its call id.
 * - `runId` + `callId`: calls waiting in exactly the run `runId` (root or sub-run) with that
 *   call id; if none and `runId` is a server run, its whole tree's calls with that call id.
 *
 * Throws HttpError: 400 `invalid_request` without `approvalId` or `runId` + `callId`, 404
 * `approval_not_found` when nothing matches, 409 `approval_ambiguous` (listing the
 * approval ids) when more than one call does.
 */
export function findApproval(runs: readonly ServerRun[], query: ApprovalQuery): ApprovalTarget {
  const { approvalId, runId, callId } = query;
  if (approvalId === undefined && (callId === undefined || runId === undefined)) {
    throw new HttpError(400, 'invalid_request', "Give 'approvalId', or 'runId' and 'callId'.");
  }
  const waiting = runs.flatMap((run) => run.pendingApprovals().map((approval) => ({ run, approval })));
  if (approvalId !== undefined) {
    const matches = waiting.filter(
      ({ run, approval }) =>
        approval.approvalId === approvalId &&
        (runId === undefined || runId === run.id || runId === approval.runId) &&
        (callId === undefined || callId === approval.callId),
    );
    if (matches.length === 0) {
      const scope = [runId !== undefined ? `in run '${runId}'` : '', callId !== undefined ? `for call '${callId}'` : ''].filter(Boolean).join(' ');
      throw new HttpError(404, 'approval_not_found', `No approval '${approvalId}' is waiting${scope ? ` ${scope}` : ''}.`);
    }
    // Approval ids are unique within a run tree; two server runs could still share one.
    if (matches.length > 1) {
      throw new HttpError(409, 'approval_ambiguous', `Approval '${approvalId}' is waiting in more than one run (${matches.map((m) => m.run.id).join(', ')}); give 'runId'.`);
    }
    return matches[0]!;
  }
  let matches = waiting.filter(({ approval }) => approval.runId === runId && approval.callId === callId);
  if (matches.length === 0) matches = waiting.filter(({ run, approval }) => run.id === runId && approval.callId === callId);
  if (matches.length === 0) {
    throw new HttpError(404, 'approval_not_found', `No approval is waiting for call '${callId}' in run '${runId}'.`);
  }
  if (matches.length > 1) {
    const list = matches.map(({ approval }) => `${approval.approvalId} (run ${approval.runId})`).join(', ');
    throw new HttpError(409, 'approval_ambiguous', `Call '${callId}' is waiting in more than one run under '${runId}': ${list}. Decide by 'approvalId'.`);
  }
  return matches[0]!;
}
