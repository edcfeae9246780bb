import type { Agent } from '../agent.js';
import { UserError } from '../errors.js';
import type { ApprovalDecisionEntry, ApprovalRequestEntry, CheckpointEntry, CheckpointStore } from '../store/checkpoint-store.js';
import { isObject } from '../tools/schema.js';
import { validateArguments } from '../tools/validate.js';
import { findAgentTool } from './agent-graph.js';
import { editedArguments } from './approvals.js';
import { editsIntact, hashArguments } from './args-hash.js';
import { claimLease } from '../store/claim-lease.js';
import { leaseOwner } from '../store/lease-owner.js';

/** A decision on a stored run's pending approval (`Runner.decide`). */
export interface StoredDecision {
  readonly approved: boolean;
  /** The model sees it with a denial. */
  readonly reason?: string;
  /** Who decided (kept in the log). */
  readonly by?: string;
  /**
   * Approve with these arguments instead of the model's (a JSON object; only with
   * `approved: true`). They are stored with the decision, bound to their hash, and the
   * resumed run validates them against the tool as it does the model's: valid edits run,
   * invalid ones give the call an error result; the model's arguments never run.
   */
  readonly args?: Record<string, unknown>;
}

/** Options of `Runner.decide`. */
export interface DecideOptions {
  /**
   * The run's first agent (as given to `Runner.resume`): edited `args` are then validated
   * against the waiting tool's schema now, and invalid ones throw InvalidToolArguments
   * before anything is written.
   */
  readonly agent?: Agent;
}

/** How long `decide` holds the run's lease while it appends (it releases it at once). */
const DECIDE_LEASE_MS = 10_000;

/**
 * Records a decision for a pending approval of a stored run from any process: the run must
 * not be running elsewhere (its lease is taken for the append and released). The decision
 * binds to the request's call id and argument hash (and edited `args` to their own hash); the
 * run applies it when it is resumed (`Runner.resume`), and only the approved call runs, with
 * exactly the arguments approved.
 * @throws RunLocked when another process holds the run (decide through its live handle instead).
 * @throws UserError when the run is not stored, nothing waits under `approvalId` (unknown, already decided or finished), or `args` is given with a denial or is not a JSON object.
 * @throws InvalidToolArguments when `options.agent` is given and `args` does not validate against the waiting tool.
 */
export async function decideStored(store: CheckpointStore, runId: string, approvalId: string, decision: StoredDecision, options: DecideOptions = {}): Promise<ApprovalDecisionEntry> {
  if (typeof decision?.approved !== 'boolean') throw new UserError(`Runner.decide needs { approved: boolean }, got ${JSON.stringify(decision)}.`);
  checkDecisionEdits(decision);
  const owner = leaseOwner();
  // A run whose owner is provably dead is taken over at once (claimLease); a live owner's is refused.
  await claimLease(store, runId, owner, DECIDE_LEASE_MS);
  try {
    if (decision.args !== undefined && options.agent) await validateStoredEdits(store, runId, approvalId, decision.args, options.agent);
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
    ...editsOf(decision),
    ...(decision.by !== undefined ? { by: String(decision.by) } : {}),
    decidedAt: Date.now(),
  };
  await store.append(runId, [entry], saved.head, store.claim ? { owner, seq: saved.entries.length } : undefined);
  return entry;
}

/** @throws UserError when a decision's edited `args` come with a denial or are not a JSON object. */
export function checkDecisionEdits(decision: StoredDecision): void {
  if (decision.args === undefined) return;
  if (decision.approved !== true) throw new UserError('Edited args are only allowed with approved: true.');
  const text = editedArguments({ args: decision.args }).arguments;
  if (!isObject(JSON.parse(text))) throw new UserError(`Edited args must be a JSON object, got ${text.length > 40 ? `${text.slice(0, 40)}…` : text}.`);
}

/** The fields a decision's edits add to its log entry (the text and its hash). */
function editsOf(decision: StoredDecision): Pick<ApprovalDecisionEntry, 'editedArguments' | 'editedArgsHash'> {
  if (decision.args === undefined || !decision.approved) return {};
  const text = editedArguments({ args: decision.args }).arguments;
  return { editedArguments: text, editedArgsHash: hashArguments(text) };
}

/**
 * Validates edits against the waiting call's tool, found from `agent` (the run's first agent)
 * by the waiting run's agent and the request's tool name.
 * @throws InvalidToolArguments when they do not validate; UserError when the tool cannot be found.
 */
async function validateStoredEdits(store: CheckpointStore, runId: string, approvalId: string, args: Record<string, unknown>, agent: Agent): Promise<void> {
  const saved = await store.load(runId);
  const request = saved && pendingRequest(saved.entries, approvalId);
  if (!saved || !request) return; // appendDecision reports these
  const tool = findAgentTool(agent, saved.head.agent, request.tool);
  if (!tool) throw new UserError(`Cannot validate the edited args: no agent '${saved.head.agent}' with a tool '${request.tool}' is reachable from agent '${agent.name}'.`);
  // The resumed run validates the parsed JSON text; so does this check.
  validateArguments(tool, JSON.parse(editedArguments({ args }).arguments));
}

/** The open turn's request under `approvalId` that has neither a decision nor a result yet. */
function pendingRequest(entries: readonly CheckpointEntry[], approvalId: string): ApprovalRequestEntry | undefined {
  let request: ApprovalRequestEntry | undefined;
  for (const entry of entries) {
    if (entry.kind === 'approval_request' && entry.approvalId === approvalId) request = entry;
    // Only a decision bound to the request's call and arguments settles it (a stale one leaves it pending).
    else if (entry.kind === 'approval_decision' && request && entry.approvalId === approvalId && entry.callId === request.callId && entry.argsHash === request.argsHash && editsIntact(entry)) request = undefined;
    else if (entry.kind === 'turn_end' && request && entry.turn === request.turn) request = undefined;
    else if (entry.kind === 'result' && request && entry.turn === request.turn && entry.message.role === 'tool' && entry.message.callId === request.callId) request = undefined;
  }
  return request;
}

/** The stored approvals of a run still waiting for a decision (for servers and tools). */
export async function pendingStoredApprovals(store: CheckpointStore, runId: string): Promise<ApprovalRequestEntry[]> {
  const saved = await store.load(runId);
  return saved ? pendingApprovalRequests(saved.entries) : [];
}

/** The approval requests of a loaded log that still wait for a decision, in request order. */
export function pendingApprovalRequests(entries: readonly CheckpointEntry[]): ApprovalRequestEntry[] {
  const ids = new Set<string>();
  for (const entry of entries) if (entry.kind === 'approval_request') ids.add(entry.approvalId);
  return [...ids].map((id) => pendingRequest(entries, id)).filter((r): r is ApprovalRequestEntry => r !== undefined);
}
