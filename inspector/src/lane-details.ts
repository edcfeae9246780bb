import { showDetails } from './details.js';
import type { Lane, Store } from './store.js';

/** Every approval record of one call: requested, then how it ended and who decided. */
export function approvalsOf(store: Store, runId: string, callId: string): unknown[] {
  return [...store.approvalLog.values()].flat().filter((a) => a.runId === runId && a.callId === callId).map(({ state, decidedBy, reason, since, deadline, ts, approvalId, args }) => ({ approvalId, state, decidedBy, reason, args, since, deadline, at: ts }));
}

/** Opens a timeline lane's details: timing, arguments, result, progress, failed attempts, approvals. */
export function openLane(store: Store, selectedRun: string | undefined, lane: Lane): void {
  const call = selectedRun ? store.runs.get(selectedRun)?.transcript.calls.get(`${lane.runId}|${lane.callId}`) : undefined;
  showDetails('lane', `${lane.tool} ${lane.callId}`, {
    runId: lane.runId,
    callId: lane.callId,
    tool: lane.tool,
    agent: lane.agent,
    path: lane.path,
    timing: { start: lane.start, end: lane.end, durationMs: lane.start !== undefined && lane.end !== undefined ? lane.end - lane.start : undefined, approvalWaitMs: lane.approvalStart !== undefined && lane.approvalEnd !== undefined ? lane.approvalEnd - lane.approvalStart : undefined, ranAlone: lane.alone },
    arguments: call?.rawArgs,
    args: call?.args,
    status: call?.status,
    output: call?.output ?? lane.output,
    result: call?.result,
    details: call?.details,
    progress: call?.progress,
    failedAttempts: call?.failures,
    approvals: approvalsOf(store, lane.runId, lane.callId),
  });
}

