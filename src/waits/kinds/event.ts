import { UserError, WaitTimeout } from '../../errors.js';
import { DETAIL_ISSUE, RESOLUTION_ISSUE } from './records.js';
import type { WaitKind } from './wait-kind.js';

/** A JSON value as it is stored: anything JSON.stringify writes. @throws UserError for anything else. */
export function jsonPayload(given: unknown, what: string): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(given);
  } catch (error) {
    throw new UserError(`${what} cannot be written as JSON: ${(error as Error).message}.`);
  }
  if (text === undefined) throw new UserError(`${what} cannot be written as JSON (got ${typeof given}).`);
  return JSON.parse(text) as unknown;
}

/** An external event a tool waits for (`waitForEvent(name)`): detail `{ name }`; resolution: the event's payload (a JSON value). */
export const eventKind: WaitKind = {
  name: 'event',
  atDeadline: 'timeout',
  resolution: (view, given) => jsonPayload(given, `The payload of event '${String(view.detail['name'])}'`),
  callResult: (view, outcome) =>
    outcome.ended === 'timedOut'
      ? { error: new WaitTimeout(`event '${String(view.detail['name'])}' did not arrive within ${view.deadline! - view.requestedAt} ms`) }
      : { value: outcome.resolution ?? null },
  openedEvent: (view, base) => ({ type: 'wait_opened', ...base, waitId: view.waitId, kind: 'event', detail: view.detail, deadline: view.deadline }),
  resolvedEvent: (view, outcome, base) => ({
    type: 'wait_resolved',
    ...base,
    waitId: view.waitId,
    kind: 'event',
    timedOut: outcome.ended === 'timedOut',
    ...(outcome.ended === 'resolved' ? { resolution: outcome.resolution } : {}),
  }),
  detailIssue: DETAIL_ISSUE.event,
  resolutionIssue: RESOLUTION_ISSUE.event,
};
