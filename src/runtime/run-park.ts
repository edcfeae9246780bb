/**
 * Parking a durable run at a wait: when it parks (a pure rule the chart's `parkNow` guard
 * reads), storing the head as "suspended", and the run's end as `run_suspended`.
 */
import { RunCancelled } from '../errors.js';
import { shouldPark } from '../rules/batch.js';
import type { SuspendedApproval } from '../types.js';
import { head } from './run-record.js';
import type { RunState } from './run-state.js';

/**
 * Whether the run parks now (pure; the `parkNow` guard): a durable root run asked to suspend
 * (or configured to), with nothing in flight, while the current call's approval wait is open.
 */
export function parkNow(state: RunState): boolean {
  if (!parksForWaits(state)) return false;
  const slot = state.batch.slots[state.batch.cursor];
  return shouldPark(state.inFlight, slot !== undefined && state.approvals.isWaiting(`${state.runId}:${slot.key}`));
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
  state.parked = openApprovals(state);
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
  const approvals: SuspendedApproval[] = state.parked ?? [];
  state.outcome = { status: 'suspended', runId: state.runId, approvals };
  // Leaving the approval wait withdrew it from the tree's inbox without a decision; nothing else runs.
  state.abortController.abort(new RunCancelled('run suspended'));
  void state.runLog?.close();
  state.parentRef?.send({ type: 'child.ended', runId: state.runId, status: 'suspended' });
  state.sink({ type: 'run_suspended', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, approvals, usage: { ...state.usage } });
}

/** This run's approvals waiting in the tree's inbox, as a suspended run lists them. */
function openApprovals(state: RunState): SuspendedApproval[] {
  return state.approvals
    .pending()
    .filter((view) => view.runId === state.runId)
    .map((view) => {
      const call = state.batch.byKey.get(view.approvalId.slice(state.runId.length + 1))!.call;
      return { approvalId: view.approvalId, callId: call.id, tool: call.name, arguments: call.arguments, requestedAt: view.requestedAt };
    });
}
