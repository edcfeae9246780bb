/**
 * Parking a durable run at a wait: when it parks (a pure rule the chart's `parkNow` guard
 * reads), storing the head as "suspended", and the run's end as `run_suspended`.
 */
import { RunCancelled } from '../errors.js';
import { shouldPark } from '../rules/batch.js';
import type { SuspendedApproval } from '../types.js';
import type { WaitView } from '../waits/wait-types.js';
import { head } from './run-record.js';
import type { RunState } from './run-state.js';

/**
 * Whether the run parks now (pure; the `parkNow` guard): a durable root run asked to suspend
 * (or configured to) that only waits: it has an open wait, and every call in flight is waiting
 * (for an event, a time, an answer). Its open waits are in the tree's inbox.
 */
export function parkNow(state: RunState): boolean {
  if (!parksForWaits(state)) return false;
  const waits = state.waits.openFor(state.runId);
  if (waits.length === 0) return false;
  let callWaits = 0;
  const now = Date.now();
  for (const wait of waits) {
    // A due wait (a resumed timer whose time has come) ends on its own now: parking would only have the run woken again at once.
    if (wait.deadline !== undefined && wait.deadline <= now) return false;
    if (wait.kind !== 'approval') callWaits++;
  }
  return shouldPark(state.inFlight - callWaits, true);
}

/** Whether the run parks at its waits (a durable root run with `suspendOnWait`, or asked by handle.suspend()). */
export function parksForWaits(state: RunState): boolean {
  return state.runLog !== undefined && !state.parentRef && (state.suspendRequested || state.options.checkpoint?.suspendOnWait === true);
}

/**
 * Entering `suspending`: the run stores its head as "suspended" (the requests of its open
 * waits are logged already) and is told `checkpoint.saved` once it is stored (a failed write
 * arrives as `log.failed`). The waits it parks on are its open ones in the tree's inbox: the
 * wait actor the run just left is stopped after this step, which withdraws it.
 */
export function parkRun(state: RunState): void {
  state.parked = openWaits(state);
  state.runLog!.append([], head(state, 'suspended'));
  const self = state.self;
  state.runLog!.settle().then(
    () => {
      if (self.getSnapshot().status === 'active') self.send({ type: 'checkpoint.saved' });
    },
    () => undefined,
  );
}

/** Entering `suspended`: the run is parked; its lease is released and the stream ends with run_suspended. */
export function emitSuspended(state: RunState): void {
  const { approvals, waits } = state.parked ?? { approvals: [], waits: [] };
  state.outcome = { status: 'suspended', runId: state.runId, approvals, waits };
  // Leaving the approval wait withdrew it from the tree's inbox without a decision; nothing else runs.
  state.abortController.abort(new RunCancelled('run suspended'));
  void state.runLog?.close();
  state.parentRef?.send({ type: 'child.ended', runId: state.runId, status: 'suspended' });
  state.sink({ type: 'run_suspended', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, approvals, waits, usage: { ...state.usage } });
}

/** This run's waits in the tree's inbox, and its approvals among them as a suspended run lists them. */
function openWaits(state: RunState): { approvals: SuspendedApproval[]; waits: WaitView[] } {
  const waits = state.waits.openFor(state.runId);
  const approvals = waits
    .filter((view) => view.kind === 'approval')
    .map((view) => {
      const call = state.batch.byKey.get(view.waitId.slice(state.runId.length + 1))!.call;
      return { approvalId: view.waitId, callId: call.id, tool: call.name, arguments: call.arguments, requestedAt: view.requestedAt };
    });
  return { approvals, waits };
}
