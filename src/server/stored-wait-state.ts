/**
 * What a run tree's logs say of one wait, an approval (by its `approvalId`) or a call's wait
 * (by its `waitId`): open, decided / resolved, timed out, or closed without either. The log is
 * the truth a decision sent through the bus is checked against: the owning worker's run (or the
 * worker that resumes a parked run) writes the decision there when it applies it.
 */
import { pendingApprovalRequests } from '../runtime/decide.js';
import { pendingStoredWaits } from '../runtime/stored-waits.js';
import type { ApprovalDecisionEntry, CheckpointEntry, CheckpointStore, WaitResolutionEntry } from '../store/checkpoint-store.js';
import type { CallWaitKind } from '../waits/kinds/records.js';

interface WaitBase {
  readonly waitId: string;
  readonly kind: 'approval' | CallWaitKind;
  /** The run that waits: the root or one of its sub-runs. */
  readonly runId: string;
  readonly callId: string;
  readonly tool: string;
}

/** One wait as the logs tell it (`GET /api/runs/:id/waits/:waitId`). */
export type StoredWaitState =
  /** Still waiting. */
  | (WaitBase & { readonly state: 'open' })
  /** An approval's decision is in the log. */
  | (WaitBase & { readonly state: 'decided'; readonly decision: StoredDecisionView })
  /** A call's wait was resolved (an answer, a signal's payload, a timer's time). */
  | (WaitBase & { readonly state: 'resolved'; readonly resolution: unknown; readonly by: string | undefined; readonly resolvedAt: number })
  /** A call's wait ran out (its timeout). */
  | (WaitBase & { readonly state: 'timed_out'; readonly resolvedAt: number })
  /** Its call ended with neither (the run was cancelled, aborted or moved past it). */
  | (WaitBase & { readonly state: 'closed' });

/** An approval decision as the log holds it. */
export interface StoredDecisionView {
  readonly decision: 'approve' | 'deny';
  readonly reason?: string;
  /** The edited arguments' JSON text, when approved with edits. */
  readonly editedArguments?: string;
  readonly by: string | undefined;
  readonly decidedAt: number;
}

/**
 * The state of wait `waitId` in the tree rooted at `rootId` (the root's log, then every sub-run
 * it started); undefined when no log of the tree has requested it.
 * @throws whatever the store's `load` throws (a damaged log: UserError).
 */
export async function storedWaitState(store: CheckpointStore, rootId: string, waitId: string): Promise<StoredWaitState | undefined> {
  const queue = [rootId];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const runId = queue.shift()!;
    if (seen.has(runId)) continue;
    seen.add(runId);
    const saved = await store.load(runId);
    if (!saved) continue;
    const state = waitStateIn(runId, saved.entries, waitId);
    if (state) return state;
    for (const entry of saved.entries) if (entry.kind === 'subrun_start') queue.push(entry.runId);
  }
  return undefined;
}

/** The wait's state from one run's log; undefined when that log never requested it. */
export function waitStateIn(runId: string, entries: readonly CheckpointEntry[], waitId: string): StoredWaitState | undefined {
  let at = -1;
  entries.forEach((entry, index) => {
    if ((entry.kind === 'approval_request' && entry.approvalId === waitId) || (entry.kind === 'wait_request' && entry.waitId === waitId)) at = index;
  });
  if (at < 0) return undefined;
  const request = entries[at]!;
  const later = entries.slice(at + 1);
  if (request.kind === 'approval_request') {
    const base: WaitBase = { waitId, kind: 'approval', runId, callId: request.callId, tool: request.tool };
    if (pendingApprovalRequests(entries).some((r) => r.approvalId === waitId)) return { ...base, state: 'open' };
    const decision = later.filter((e): e is ApprovalDecisionEntry => e.kind === 'approval_decision' && e.approvalId === waitId).at(-1);
    return decision ? { ...base, state: 'decided', decision: decisionView(decision) } : { ...base, state: 'closed' };
  }
  if (request.kind !== 'wait_request') return undefined;
  const base: WaitBase = { waitId, kind: request.waitKind, runId, callId: request.callId, tool: request.tool };
  if (pendingStoredWaits(entries).some((w) => w.waitId === waitId)) return { ...base, state: 'open' };
  const resolution = later.filter((e): e is WaitResolutionEntry => e.kind === 'wait_resolution' && e.waitId === waitId).at(-1);
  if (!resolution) return { ...base, state: 'closed' };
  if (resolution.ended === 'timedOut') return { ...base, state: 'timed_out', resolvedAt: resolution.resolvedAt };
  return { ...base, state: 'resolved', resolution: resolution.resolution, by: resolution.by, resolvedAt: resolution.resolvedAt };
}

function decisionView(entry: ApprovalDecisionEntry): StoredDecisionView {
  return {
    decision: entry.approved ? 'approve' : 'deny',
    ...(entry.reason !== undefined ? { reason: entry.reason } : {}),
    ...(entry.editedArguments !== undefined ? { editedArguments: entry.editedArguments } : {}),
    by: entry.by,
    decidedAt: entry.decidedAt,
  };
}
