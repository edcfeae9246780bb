/**
 * Whether a decision sent through the bus (an approval's decision, a question's answer, a
 * signal's payload) has been applied, judged from the run tree's logs, the truth: the owning
 * worker's run writes the decision there when it applies it, and so does the worker that
 * resumes a parked run. `awaitVerdict` waits for the verdict, woken by the run's event notices.
 */
import type { IncomingMessage } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { isFinished } from '../run-status.js';
import { HttpError } from './http.js';
import type { StoredWaitState } from './stored-wait-state.js';

/** The longest a request may ask to wait for its decision (seconds); a longer `Prefer: wait` is cut to it. */
export const MAX_WAIT_SECONDS = 60;
/** Looks at the logs at least this often while waiting (a notice of the run's events wakes it sooner). */
const LOOK_EVERY_MS = 250;

/** What was sent: an approval's decision, or a call wait's resolution (an answer, a payload). */
export type SentDecision =
  | { readonly kind: 'approve'; readonly approved: boolean; readonly reason?: string; readonly editedArguments?: string }
  | { readonly kind: 'resolve'; readonly value: unknown };

/** Why a sent decision did not take effect (HTTP 409, or 404 when the run is gone). */
export type RefusalCode = 'already_decided' | 'already_resolved' | 'timed_out' | 'wait_closed' | 'run_finished' | 'run_not_found';

export type WaitVerdict =
  /** Not applied yet: the owner has not got to it (or no worker has claimed the parked run yet). */
  | { readonly verdict: 'pending' }
  /** The log holds this decision: applied at `at` (epoch ms). */
  | { readonly verdict: 'applied'; readonly at: number }
  /** It cannot take effect any more; `standing` is what the log holds instead. */
  | { readonly verdict: 'refused'; readonly status: 404 | 409; readonly code: RefusalCode; readonly message: string; readonly standing?: StoredWaitState };

/**
 * How long the client asked to wait for its decision to be applied, in ms: `?wait=<seconds>`
 * (an integer 1..MAX_WAIT_SECONDS) or the header `Prefer: wait=<seconds>` (RFC 7240; cut to
 * MAX_WAIT_SECONDS, ignored when malformed, as a preference may be); undefined: do not wait.
 * @throws HttpError 400 `invalid_wait` for a `?wait` that is not such an integer.
 */
export function requestedWaitMs(req: IncomingMessage, url: URL): number | undefined {
  const query = url.searchParams.get('wait');
  if (query !== null) {
    const seconds = Number(query);
    if (!/^\d+$/.test(query) || seconds < 1 || seconds > MAX_WAIT_SECONDS) throw new HttpError(400, 'invalid_wait', `Query parameter 'wait' must be a whole number of seconds from 1 to ${MAX_WAIT_SECONDS}, got '${query}'.`);
    return seconds * 1000;
  }
  const prefer = req.headers['prefer'];
  const match = /(?:^|[,;\s])wait\s*=\s*(\d+)/i.exec(Array.isArray(prefer) ? prefer.join(',') : (prefer ?? ''));
  if (!match) return undefined;
  const seconds = Math.min(Number(match[1]), MAX_WAIT_SECONDS);
  return seconds > 0 ? seconds * 1000 : undefined;
}

/** The verdict on one wait for what was sent to it, given the wait's state and the root run's status. */
export function verdictOf(state: StoredWaitState | undefined, sent: SentDecision, rootStatus: string | undefined, waitId: string): WaitVerdict {
  if (rootStatus === undefined) return { verdict: 'refused', status: 404, code: 'run_not_found', message: `The run of wait '${waitId}' is gone.` };
  if (!state || state.state === 'open') {
    if (!isFinished(rootStatus)) return { verdict: 'pending' };
    return { verdict: 'refused', status: 409, code: 'run_finished', message: `The run finished (${rootStatus}) before '${waitId}' was decided.`, ...(state ? { standing: state } : {}) };
  }
  if (state.state === 'decided' && sent.kind === 'approve' && sameDecision(state.decision, sent)) return { verdict: 'applied', at: state.decision.decidedAt };
  if (state.state === 'resolved' && sent.kind === 'resolve' && isDeepStrictEqual(state.resolution, sent.value)) return { verdict: 'applied', at: state.resolvedAt };
  return refusalFor(state);
}

/** Why nothing more can be decided on a wait that is no longer open (the log holds `state`). */
export function refusalFor(state: Exclude<StoredWaitState, { state: 'open' }>): Extract<WaitVerdict, { verdict: 'refused' }> {
  const { waitId } = state;
  switch (state.state) {
    case 'decided': {
      const { decision } = state;
      return { verdict: 'refused', status: 409, code: 'already_decided', message: `Approval '${waitId}' was already decided: ${decision.decision}${decision.by ? ` by ${decision.by}` : ''}${decision.reason ? ` (${decision.reason})` : ''}.`, standing: state };
    }
    case 'resolved':
      return { verdict: 'refused', status: 409, code: 'already_resolved', message: `Wait '${waitId}' was already resolved${state.by ? ` by ${state.by}` : ''} with ${JSON.stringify(state.resolution)}.`, standing: state };
    case 'timed_out':
      return { verdict: 'refused', status: 409, code: 'timed_out', message: `Wait '${waitId}' has timed out.`, standing: state };
    case 'closed':
      return { verdict: 'refused', status: 409, code: 'wait_closed', message: `The call of '${waitId}' ended without a decision (the run was cancelled, aborted or moved on).`, standing: state };
  }
}

/** Approve/deny alike, and the same edits (approve) or the same reason (deny). */
function sameDecision(logged: { decision: string; reason?: string; editedArguments?: string }, sent: Extract<SentDecision, { kind: 'approve' }>): boolean {
  if ((logged.decision === 'approve') !== sent.approved) return false;
  return sent.approved ? logged.editedArguments === sent.editedArguments : (logged.reason ?? '') === (sent.reason ?? '');
}

/**
 * Looks (`look`) until the verdict is no longer pending or `waitMs` has passed, looking again at
 * each notice `onEvents` gives and at least every LOOK_EVERY_MS. Returns the last verdict
 * (pending when the time ran out).
 */
export async function awaitVerdict(look: () => Promise<WaitVerdict>, waitMs: number, onEvents: (handler: () => void) => () => void): Promise<WaitVerdict> {
  const deadline = Date.now() + waitMs;
  let noticed = false;
  let wake: (() => void) | undefined;
  const stop = onEvents(() => {
    noticed = true;
    wake?.();
  });
  try {
    for (;;) {
      noticed = false;
      const verdict = await look();
      const left = deadline - Date.now();
      if (verdict.verdict !== 'pending' || left <= 0) return verdict;
      if (noticed) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(LOOK_EVERY_MS, left));
        function done(): void {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
        wake = done;
      });
    }
  } finally {
    stop();
  }
}
