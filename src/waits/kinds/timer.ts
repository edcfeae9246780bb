import { UserError } from '../../errors.js';
import { DETAIL_ISSUE, RESOLUTION_ISSUE } from './records.js';
import type { WaitKind } from './wait-kind.js';

/** A point in time a tool waits for (`waitUntil(time)`): detail `{ until }` (epoch ms); the clock resolves it then. */
export const timerKind: WaitKind = {
  name: 'timer',
  atDeadline: 'resolve',
  resolution: (view) => {
    throw new UserError(`Wait '${view.waitId}' is a timer: it ends on its own at ${new Date(view.deadline!).toISOString()}; it cannot be resolved.`);
  },
  callResult: (view) => ({ value: `Waited until ${new Date(view.deadline!).toISOString()}.` }),
  openedEvent: (view, base) => ({ type: 'wait_opened', ...base, waitId: view.waitId, kind: 'timer', detail: view.detail, deadline: view.deadline }),
  resolvedEvent: (view, outcome, base) => ({
    type: 'wait_resolved',
    ...base,
    waitId: view.waitId,
    kind: 'timer',
    timedOut: false,
    ...(outcome.ended === 'resolved' ? { resolution: outcome.resolution } : {}),
  }),
  detailIssue: DETAIL_ISSUE.timer,
  resolutionIssue: RESOLUTION_ISSUE.timer,
};
