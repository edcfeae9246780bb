/**
 * The waits a tool returns instead of a value: everything this file exports is public API
 * (src/index.ts re-exports all of it), one constructor per call-wait kind.
 */
import { UserError } from '../errors.js';
import { WAIT_REQUEST, type WaitRequest } from './wait-types.js';

/**
 * Returned by a tool instead of a value: the call waits for the external event `name` and its
 * result is the event's payload (a JSON value). Deliver it with `handle.signal(name, payload)`,
 * `Runner.signal(store, runId, name, payload)` from any process, or
 * `POST /api/runs/:id/signal {name, payload}`. Every call waiting for `name` gets it. With
 * `timeoutMs`, a call still waiting then gets a `WaitTimeout` error result. A durable run can
 * park while it waits (`checkpoint.suspendOnWait`), for as long as it takes.
 * @throws UserError for an empty name or a timeout that is not a positive number of ms.
 *
 * ```ts
 * execute: async ({ order }) => {
 *   await payments.start(order);
 *   return waitForEvent(`payment.confirmed:${order}`, { timeoutMs: 24 * 3600_000 });
 * }
 * ```
 */
export function waitForEvent(name: string, options: { readonly timeoutMs?: number } = {}): WaitRequest {
  if (typeof name !== 'string' || name.length === 0) throw new UserError(`waitForEvent needs an event name, got ${JSON.stringify(name)}.`);
  const timeoutMs = options.timeoutMs;
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))) throw new UserError(`waitForEvent: timeoutMs must be a positive number of ms, got ${String(timeoutMs)}.`);
  return { [WAIT_REQUEST]: true, kind: 'event', detail: { name }, ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
}

/**
 * Returned by a tool instead of a value: the call waits until `time` (a Date or epoch ms; a
 * time in the past ends it at once). Its result says when it waited until. The wait survives
 * restarts: a parked run is resumed when the time comes (`troupe serve`, `troupe worker`).
 * @throws UserError when `time` is not a valid date.
 */
export function waitUntil(time: Date | number): WaitRequest {
  const until = time instanceof Date ? time.getTime() : time;
  if (typeof until !== 'number' || !Number.isFinite(until) || until < 0) throw new UserError(`waitUntil needs a Date or epoch ms, got ${String(time)}.`);
  return { [WAIT_REQUEST]: true, kind: 'timer', detail: { until: Math.round(until) }, until: Math.round(until) };
}
