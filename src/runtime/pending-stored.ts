/**
 * What a stored run waits for, read from its log (`Runner.pending`): for the process that
 * decides or answers later (another program, a cron job, a support tool) and needs the ids.
 */
import { UserError } from '../errors.js';
import type { ApprovalRequestEntry, CheckpointStore, WaitRequestEntry } from '../store/checkpoint-store.js';
import { pendingApprovalRequests } from './decide.js';
import { pendingStoredWaits } from './stored-waits.js';

/** A stored run's open waits, each in request order. */
export interface StoredPending {
  /** Approval requests without a decision: decide each with `Runner.decide(store, runId, approvalId, …)`. */
  readonly approvals: readonly ApprovalRequestEntry[];
  /** Other waits (question, event, timer) without a resolution: `Runner.answer`, `Runner.signal` or `Runner.resolve`. */
  readonly waits: readonly WaitRequestEntry[];
}

/**
 * The approvals and waits a stored run (parked, or left `running` by a process that died)
 * has open in its own log. Reads only; takes no lease. A sub-run (an agent used as a tool)
 * keeps its own log under `<runId>/<turn>.<index>`: ask for it by that id.
 * @throws UserError when `runId` is not in the store; the store's error for a damaged log.
 */
export async function pendingStored(store: CheckpointStore, runId: string): Promise<StoredPending> {
  const saved = await store.load(runId);
  if (!saved) throw new UserError(`Run '${runId}' is not in the checkpoint store.`);
  return { approvals: pendingApprovalRequests(saved.entries), waits: pendingStoredWaits(saved.entries) };
}
