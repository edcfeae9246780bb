import type { HeldLease } from '../store/claim-lease.js';
import { HttpError } from './http.js';
import type { ServerRun } from './runs.js';

/** Where a resumed server run stands while the API waits for it to reopen its approvals. */
export type Readiness = 'ready' | 'lease_waiting' | 'ended' | 'timeout';

/**
 * The lease a live server run waits for before it starts (its `lease_waiting` event, not yet
 * followed by `run_started`); undefined when it does not wait.
 */
export function leaseWaitOf(run: ServerRun): HeldLease | undefined {
  if (run.finished) return undefined;
  let held: HeldLease | undefined;
  for (const event of run.events) {
    if (event.runId !== run.id) continue;
    if (event.type === 'lease_waiting') held = { owner: String(event.owner), expiresAt: Number(event.expiresAt) };
    else if (event.type === 'run_started') return undefined;
  }
  return held;
}

/** Whether the run has emitted `run_started` (it holds its lease and restored its log). */
export function hasStarted(run: ServerRun): boolean {
  return run.events.some((event) => event.type === 'run_started' && event.runId === run.id);
}

/**
 * Resolves once `ready()` holds for `run` (checked on each of its events and each approval it
 * opens), or it waits for another owner's lease, or it ended, or `timeoutMs` passed: what a
 * restarted server waits for before it says an approval of a resumed run is not decidable.
 */
export function whenReady(run: ServerRun, ready: () => boolean, timeoutMs: number): Promise<Readiness> {
  return new Promise((resolve) => {
    let done = false;
    const cleanups: Array<() => void> = [];
    const finish = (readiness: Readiness): void => {
      if (done) return;
      done = true;
      for (const cleanup of cleanups) cleanup();
      resolve(readiness);
    };
    const check = (): void => {
      if (done) return;
      if (ready()) finish('ready');
      else if (run.finished) finish('ended');
      else if (leaseWaitOf(run)) finish('lease_waiting');
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    cleanups.push(() => clearTimeout(timer));
    cleanups.push(run.handle.approvals.onOpened(() => queueMicrotask(check)));
    // `subscribe` replays the kept events first: the check may already finish during it.
    const unsubscribe = run.subscribe({ event: check, end: check });
    if (done) unsubscribe();
    else cleanups.push(unsubscribe);
    check();
  });
}

/** 409 `run_locked`: the run's lease is held by another owner (named, with the lease's expiry). */
export function runLockedError(runId: string, held: HeldLease): HttpError {
  return new HttpError(409, 'run_locked', `Run '${runId}' is held by '${held.owner}' until ${new Date(held.expiresAt).toISOString()}.`);
}
