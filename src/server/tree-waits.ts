/**
 * The open waits of a stored run tree, read from the logs (the root's and those of its
 * sub-runs still in flight): what `GET /api/runs/:id` lists for a run this node does not run
 * itself (a worker's run, a parked run), and what the signal and answer routes check a
 * request against before they send it on.
 */
import { pendingApprovalRequests } from '../runtime/decide.js';
import { pendingStoredWaits } from '../runtime/stored-waits.js';
import type { CheckpointStore, WaitRequestEntry } from '../store/checkpoint-store.js';
import type { CallWaitKind } from '../waits/kinds/records.js';
import type { WaitView } from '../waits/wait-types.js';
import type { PendingApprovalView } from './runs.js';

/** A call's wait (a question, an external event, a time) as `GET /api/runs/:id` lists it in `waits`. */
export interface CallWaitView {
  /** Unique in the run tree: answer a question by it (`requestId`), or resolve any wait by it. */
  readonly waitId: string;
  readonly kind: CallWaitKind;
  /** The run that waits: the root or one of its sub-runs. */
  readonly runId: string;
  readonly callId: string;
  readonly tool: string;
  /** `{ question, options?, multiSelect }`, `{ name }` (the event to signal), `{ until }`. */
  readonly detail: Readonly<Record<string, unknown>>;
  /** When the wait opened (epoch ms). */
  readonly since: number;
  /** When it ends on its own (a timer's time, a timeout), epoch ms; undefined: never. */
  readonly deadline: number | undefined;
}

export interface TreeWaits {
  readonly pendingApprovals: PendingApprovalView[];
  readonly waits: CallWaitView[];
  /** The runs of the tree that were read (root first). */
  readonly runIds: string[];
}

/** A live wait (the run tree's inbox) as the API lists it; approvals are listed as `pendingApprovals`. */
export function callWaitOfView(view: WaitView): CallWaitView | undefined {
  if (view.kind === 'approval') return undefined;
  return { waitId: view.waitId, kind: view.kind, runId: view.runId, callId: view.callId, tool: view.tool, detail: view.detail, since: view.requestedAt, deadline: view.deadline };
}

function callWaitOfEntry(runId: string, request: WaitRequestEntry): CallWaitView {
  return { waitId: request.waitId, kind: request.waitKind, runId, callId: request.callId, tool: request.tool, detail: request.detail, since: request.requestedAt, deadline: request.deadline };
}

/**
 * Every open approval and call wait of the stored tree rooted at `rootId`: the root's log, then
 * each sub-run it started and has not ended (recursively). Empty for a run the store does not have.
 * @throws whatever the store's `load` throws (a damaged log: UserError).
 */
export async function storedTreeWaits(store: CheckpointStore, rootId: string): Promise<TreeWaits> {
  const result: TreeWaits = { pendingApprovals: [], waits: [], runIds: [] };
  const queue = [rootId];
  while (queue.length > 0) {
    const runId = queue.shift()!;
    const saved = await store.load(runId);
    if (!saved) continue;
    result.runIds.push(runId);
    const agent = saved.head.agent;
    for (const request of pendingApprovalRequests(saved.entries)) {
      result.pendingApprovals.push({ approvalId: request.approvalId, runId, callId: request.callId, tool: request.tool, args: undefined, path: [agent], agent, since: request.requestedAt, deadline: undefined });
    }
    for (const request of pendingStoredWaits(saved.entries)) result.waits.push(callWaitOfEntry(runId, request));
    const ended = new Set<string>();
    for (const entry of saved.entries) if (entry.kind === 'subrun_end') ended.add(entry.runId);
    for (const entry of saved.entries) if (entry.kind === 'subrun_start' && !ended.has(entry.runId)) queue.push(entry.runId);
  }
  return result;
}
