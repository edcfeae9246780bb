/**
 * Resolving the waits of a stored run from any process (`Runner.signal`, `Runner.answer`,
 * `Runner.resolve`): the resolution is appended to the run's log under its lease, bound to
 * the request it answers, and the run applies it when it is resumed. Approvals have their own
 * entry and rules (decide.ts); this is every other kind of wait.
 */
import { UserError } from '../errors.js';
import type { CheckpointEntry, CheckpointStore, WaitRequestEntry, WaitResolutionEntry } from '../store/checkpoint-store.js';
import { waitKind } from '../waits/kinds/index.js';
import type { WaitView } from '../waits/wait-types.js';
import { decideStored, pendingStoredApprovals } from './decide.js';
import { leaseOwner } from './run-log.js';

/** How long a resolution from another process holds the run's lease while it appends (it releases it at once). */
const RESOLVE_LEASE_MS = 10_000;

/** The open turn's call waits that have neither a resolution nor a result yet, in request order. */
export function pendingStoredWaits(entries: readonly CheckpointEntry[]): WaitRequestEntry[] {
  let open = new Map<string, WaitRequestEntry>();
  for (const entry of entries) {
    if (entry.kind === 'reply' || entry.kind === 'turn_end') open = new Map();
    else if (entry.kind === 'wait_request') open.set(entry.waitId, entry);
    else if (entry.kind === 'wait_resolution') open.delete(entry.waitId);
    else if (entry.kind === 'result' && entry.message.role === 'tool') {
      const callId = entry.message.callId;
      for (const [id, request] of open) if (request.callId === callId && request.turn === entry.turn) open.delete(id);
    }
  }
  return [...open.values()];
}

/** A stored wait request as a wait view (what a resolution is checked against). */
function viewOf(runId: string, request: WaitRequestEntry): WaitView {
  return { waitId: request.waitId, kind: request.waitKind, runId, callId: request.callId, tool: request.tool, path: [], agent: '', turn: request.turn, requestedAt: request.requestedAt, deadline: request.deadline, detail: request.detail };
}

/**
 * Appends a resolution for each of `runId`'s open call waits `select` picks, holding the run's
 * lease for the append. Returns the entries written ([] when `select` picked none; nothing is written then).
 * @throws RunLocked when another process holds the run (resolve through its live handle or server instead).
 * @throws UserError when the run is not stored, or the resolution does not fit its wait.
 */
export async function resolveStoredWaits(
  store: CheckpointStore,
  runId: string,
  select: (pending: readonly WaitRequestEntry[]) => readonly WaitRequestEntry[],
  given: unknown,
  by: string,
  /** The lease holder that writes (a worker about to resume the run keeps its lease); default a lease of its own, released after. */
  heldBy?: { readonly owner: string; readonly ttlMs: number },
): Promise<WaitResolutionEntry[]> {
  const owner = heldBy?.owner ?? leaseOwner();
  if (store.claim) await store.claim(runId, owner, heldBy?.ttlMs ?? RESOLVE_LEASE_MS);
  try {
    const saved = await store.load(runId);
    if (!saved) throw new UserError(`Run '${runId}' is not in the checkpoint store.`);
    const chosen = select(pendingStoredWaits(saved.entries));
    if (chosen.length === 0) return [];
    const resolvedAt = Date.now();
    const entries: WaitResolutionEntry[] = chosen.map((request) => ({
      kind: 'wait_resolution',
      waitId: request.waitId,
      waitKind: request.waitKind,
      callId: request.callId,
      ended: 'resolved',
      resolution: waitKind(request.waitKind).resolution(viewOf(runId, request), given),
      by,
      resolvedAt,
    }));
    await store.append(runId, entries, saved.head, store.claim ? { owner, seq: saved.entries.length } : undefined);
    return entries;
  } finally {
    if (heldBy === undefined) await store.release?.(runId, owner);
  }
}

/**
 * `Runner.signal`: delivers the external event `name` to every call of the stored run waiting
 * for it; each call's result is `payload`. Returns the resolutions written ([] when nothing
 * waits for `name`: nothing is kept for later).
 * @throws RunLocked, UserError as `resolveStoredWaits` (a payload that is not JSON is a UserError).
 */
export function signalStored(store: CheckpointStore, runId: string, name: string, payload: unknown = null, by = 'signal'): Promise<WaitResolutionEntry[]> {
  if (typeof name !== 'string' || name.length === 0) return Promise.reject(new UserError(`Runner.signal needs an event name, got ${JSON.stringify(name)}.`));
  return resolveStoredWaits(store, runId, (pending) => pending.filter((w) => w.waitKind === 'event' && w.detail['name'] === name), payload, by);
}

/**
 * `Runner.answer`: answers the question `requestId` a tool of the stored run asked (askHuman).
 * @throws UserError when no question waits under that id or the answer does not fit it; RunLocked as `resolveStoredWaits`.
 */
export async function answerStored(store: CheckpointStore, runId: string, requestId: string, answer: unknown, by = 'answer'): Promise<WaitResolutionEntry> {
  const [entry] = await resolveStoredWaits(store, runId, (pending) => pending.filter((w) => w.waitKind === 'question' && w.waitId === requestId), answer, by);
  if (!entry) throw new UserError(`Run '${runId}' has no open question '${requestId}' (it is unknown, already answered, or its call finished).`);
  return entry;
}

/**
 * `Runner.resolve`: resolves the stored run's open wait `waitId`, whatever its kind, with the
 * resolution its kind takes (an approval `{ approved, reason?, args? }` goes to `Runner.decide`).
 * @throws UserError when nothing waits under that id or the resolution does not fit; RunLocked as `resolveStoredWaits`.
 */
export async function resolveStored(store: CheckpointStore, runId: string, waitId: string, resolution: unknown, by = 'api'): Promise<CheckpointEntry> {
  if ((await pendingStoredApprovals(store, runId)).some((a) => a.approvalId === waitId)) {
    const decision = resolution as { approved?: unknown; reason?: string; args?: Record<string, unknown> };
    if (typeof decision?.approved !== 'boolean') throw new UserError(`Wait '${waitId}' is an approval: resolve it with { approved: boolean, reason?, args? }.`);
    return decideStored(store, runId, waitId, { approved: decision.approved, ...(decision.reason !== undefined ? { reason: decision.reason } : {}), ...(decision.args !== undefined ? { args: decision.args } : {}), by });
  }
  const [entry] = await resolveStoredWaits(store, runId, (pending) => pending.filter((w) => w.waitId === waitId), resolution, by);
  if (!entry) throw new UserError(`Run '${runId}' has no open wait '${waitId}' (it is unknown, already resolved, or its call finished).`);
  return entry;
}
