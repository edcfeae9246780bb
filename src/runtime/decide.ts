import { UserError } from '../errors.js';
import type { ApprovalDecisionEntry, ApprovalRequestEntry, CheckpointEntry, CheckpointStore } from '../store/checkpoint-store.js';
import { leaseOwner } from './run-log.js';

/** A decision on a stored run's pending approval (`Runner.decide`). */
export interface StoredDecision {
  readonly approved: boolean;
  /** The model sees it with a denial. */
  readonly reason?: string;
  /** Who decided (kept in the log). */
  readonly by?: string;
}

/** How long `decide` holds the run's lease while it appends (it releases it at once). */
const DECIDE_LEASE_MS = 10_000;

/**
 * Records a decision for a pending approval of a stored run from any process: the run must
 * not be running elsewhere (its lease is taken for the append and released). The decision
 * binds to the request's call id and argument hash; the run applies it when it is resumed
 * (`Runner.resume`), and only the approved call runs.
 * @throws RunLocked when another process holds the run (decide through its live handle instead).
 * @throws UserError when the run is not stored, or nothing waits under `approvalId` (unknown, already decided or finished).
 */
export async function decideStored(store: CheckpointStore, runId: string, approvalId: string, decision: StoredDecision): Promise<ApprovalDecisionEntry> {
  if (typeof decision?.approved !== 'boolean') throw new UserError(`Runner.decide needs { approved: boolean }, got ${JSON.stringify(decision)}.`);
  const owner = leaseOwner();
  if (store.claim) await store.claim(runId, owner, DECIDE_LEASE_MS);
  try {
    const entry = await appendDecision(store, runId, approvalId, decision, owner);
    if (!entry) throw new UserError(`Run '${runId}' has no pending approval '${approvalId}' (it is unknown, already decided, or its call finished).`);
    return entry;
  } finally {
    await store.release?.(runId, owner);
  }
}

/**
 * Appends the decision for `runId`'s pending approval `approvalId` as `owner`, who must hold
 * the run's lease already (a worker recording a decision sent to a run it claimed). Returns
 * undefined, writing nothing, when nothing waits under that id.
 * @throws UserError when the run is not stored; RunLocked when `owner` does not hold it.
 */
export async function appendDecision(store: CheckpointStore, runId: string, approvalId: string, decision: StoredDecision, owner: string): Promise<ApprovalDecisionEntry | undefined> {
  const saved = await store.load(runId);
  if (!saved) throw new UserError(`Run '${runId}' is not in the checkpoint store.`);
  const request = pendingRequest(saved.entries, approvalId);
  if (!request) return undefined;
  const entry: ApprovalDecisionEntry = {
    kind: 'approval_decision',
    approvalId,
    callId: request.callId,
    argsHash: request.argsHash,
    approved: decision.approved,
    ...(decision.reason !== undefined ? { reason: String(decision.reason) } : {}),
    ...(decision.by !== undefined ? { by: String(decision.by) } : {}),
    decidedAt: Date.now(),
  };
  await store.append(runId, [entry], saved.head, store.claim ? { owner, seq: saved.entries.length } : undefined);
  return entry;
}

/** The open turn's request under `approvalId` that has neither a decision nor a result yet. */
function pendingRequest(entries: readonly CheckpointEntry[], approvalId: string): ApprovalRequestEntry | undefined {
  let request: ApprovalRequestEntry | undefined;
  for (const entry of entries) {
    if (entry.kind === 'approval_request' && entry.approvalId === approvalId) request = entry;
    // Only a decision bound to the request's call and arguments settles it (a stale one leaves it pending).
    else if (entry.kind === 'approval_decision' && request && entry.approvalId === approvalId && entry.callId === request.callId && entry.argsHash === request.argsHash) request = undefined;
    else if (entry.kind === 'turn_end' && request && entry.turn === request.turn) request = undefined;
    else if (entry.kind === 'result' && request && entry.turn === request.turn && entry.message.role === 'tool' && entry.message.callId === request.callId) request = undefined;
  }
  return request;
}

/** The stored approvals of a run still waiting for a decision (for servers and tools). */
export async function pendingStoredApprovals(store: CheckpointStore, runId: string): Promise<ApprovalRequestEntry[]> {
  const saved = await store.load(runId);
  if (!saved) return [];
  const ids = new Set<string>();
  for (const entry of saved.entries) if (entry.kind === 'approval_request') ids.add(entry.approvalId);
  return [...ids].map((id) => pendingRequest(saved.entries, id)).filter((r): r is ApprovalRequestEntry => r !== undefined);
}
