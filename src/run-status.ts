/**
 * Where a run stands: one vocabulary for the runtime, the stored head, the wire, the server's
 * run list and the inspector. A cancelled run is `cancelled` everywhere (logs of format 4 and
 * older called it `interrupted`; readers turn that into `cancelled`, see `fromStoredStatus`).
 *
 * This module imports nothing, so `troupe/server` can use it without loading store code.
 */

/** Every status, in the order error messages list them. */
export const RUN_STATUSES = ['queued', 'running', 'suspended', 'completed', 'failed', 'cancelled'] as const;

/**
 * - `queued`: accepted (a server or a PostgreSQL job queue holds it) but not started: no head yet.
 * - `running`: started and not over; also a run whose process crashed (nothing wrote a final head).
 * - `suspended`: parked while it only waits (approvals, questions, events, times); resumable.
 * - `completed`: ended with a final output.
 * - `failed`: ended with an error.
 * - `cancelled`: ended by a cancel (handle.cancel, an aborted signal, a tool's RunCancelled, a
 *   parent cancelling, an aborted parked run); a stored cancelled run can be resumed.
 */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The statuses a stored head can have: a queued run has no head yet. */
export type StoredRunStatus = Exclude<RunStatus, 'queued'>;

/** Every status a stored head may have, in the order error messages list them. */
export const STORED_RUN_STATUSES: readonly StoredRunStatus[] = ['running', 'suspended', 'completed', 'failed', 'cancelled'];

/** Statuses of a run that is over: nothing continues it unless someone resumes it. */
export const FINISHED_RUN_STATUSES: readonly StoredRunStatus[] = ['completed', 'failed', 'cancelled'];

/** What logs of format 4 and older stored for a cancelled run. */
export const LEGACY_CANCELLED_STATUS = 'interrupted';

/** Whether `status` (any string, or nothing) is one of a run that is over. */
export function isFinished(status: string | undefined): boolean {
  return (FINISHED_RUN_STATUSES as readonly (string | undefined)[]).includes(status);
}

/**
 * A status read from a stored record of format `version`: `interrupted` of format 4 and older
 * is `cancelled`. Anything else is returned as it is (the record checks reject what is not a
 * status).
 */
export function fromStoredStatus(status: unknown, version: number): unknown {
  return status === LEGACY_CANCELLED_STATUS && version <= 4 ? 'cancelled' : status;
}

/**
 * Statuses to match in a stored column when a caller asks for `statuses`: asking for
 * `cancelled` also matches the rows of older runs that still say `interrupted`.
 */
export function storedStatusesToMatch(statuses: readonly string[]): string[] {
  return statuses.includes('cancelled') ? [...statuses, LEGACY_CANCELLED_STATUS] : [...statuses];
}
