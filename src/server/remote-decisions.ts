/**
 * Decisions sent to a worker's run through the bus (`--workers external`): `POST
 * /api/chat/approve`, `POST /api/chat/answer` and `POST /api/runs/:id/signal` check the request
 * against the run tree's logs, send it to the run's owner, and, when the client asks to wait
 * (`?wait=<seconds>` or `Prefer: wait=<seconds>`), answer once the log shows it applied (200)
 * or refused (409), or when the wait runs out (202, still on its way). `GET
 * /api/runs/:id/waits/:waitId` tells afterwards what the log holds.
 */
import type { IncomingMessage } from 'node:http';
import { editedArguments, runOfApproval } from '../runtime/approvals.js';
import { pendingStoredApprovals } from '../runtime/decide.js';
import type { ApprovalRequestEntry, CheckpointStore, RunStatus } from '../store/checkpoint-store.js';
import type { RunBus } from '../store/run-bus.js';
import { checkEditedArgs, parseApproveBody } from './approve-body.js';
import { awaitVerdict, refusalFor, requestedWaitMs, verdictOf, type SentDecision, type WaitVerdict } from './decision-verdicts.js';
import { HttpError } from './http.js';
import type { RemoteStreams } from './remote-streams.js';
import { agentFor, type RecoveryHost } from './run-recovery.js';
import { storedWaitState, waitStateIn, type StoredWaitState } from './stored-wait-state.js';
import { answerRemote, parseAnswerBody, parseSignalBody, signalRemote } from './wait-routes.js';

/** What the decision routes need of a server node in a cluster. */
export interface DecisionContext {
  readonly cluster: { readonly store: CheckpointStore & { runState(runId: string): Promise<RunStatus | undefined> }; readonly bus: RunBus };
  readonly streams: RemoteStreams;
  /** The registered agents, to validate edited approval args before they are sent (the worker's run validates them again). */
  readonly agents?: RecoveryHost['agents'];
  readonly maxReasonChars: number;
}

/** A route's answer: its HTTP status and JSON body. */
export interface RouteAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

const DELIVERED = 'sent to the run’s worker';

/** Where a client reads the wait's state afterwards. */
export function waitStatusUrl(rootId: string, waitId: string): string {
  return `/api/runs/${encodeURIComponent(rootId)}/waits/${encodeURIComponent(waitId)}`;
}

/**
 * `POST /api/chat/approve`: finds the waiting call in the run's log (the request is logged when
 * the call starts waiting) and sends the decision to the run's owner (see `settle` for the answer).
 * @throws HttpError 400 (body, `invalid_args`, `invalid_wait`), 404 `approval_not_found`, 409 `already_decided` / `approval_ambiguous` / `run_damaged`.
 */
export async function approveRemote(text: string, req: IncomingMessage, url: URL, ctx: DecisionContext): Promise<RouteAnswer> {
  const waitMs = requestedWaitMs(req, url);
  const body = parseApproveBody(text, req, ctx.maxReasonChars);
  if (body.approvalId === undefined && (body.callId === undefined || body.runId === undefined)) throw new HttpError(400, 'invalid_request', "Give 'approvalId', or 'runId' and 'callId'.");
  const runId = body.approvalId !== undefined ? runOfApproval(body.approvalId) : body.runId!;
  const { store } = ctx.cluster;
  const request = await waitingRequest(store, runId, body);
  const root = runId.split('/')[0]!;
  if (body.args !== undefined) await checkRemoteEdits(ctx, root, runId, request.tool, body.args);
  const message = { kind: 'approve' as const, approvalId: request.approvalId, approved: body.approve, ...(body.reason ? { reason: body.reason } : {}), ...(body.args ? { args: body.args } : {}), by: 'api' };
  await ctx.cluster.bus.send(root, message);
  const sent: SentDecision = { kind: 'approve', approved: body.approve, ...(body.reason ? { reason: body.reason } : {}), ...(body.args ? { editedArguments: editedArguments({ args: body.args }).arguments } : {}) };
  const base = { runId, approvalId: request.approvalId, callId: request.callId, decision: body.approve ? 'approve' : 'deny', statusUrl: waitStatusUrl(root, request.approvalId) };
  return settle(ctx, root, [request.approvalId], sent, base, waitMs);
}

/**
 * `POST /api/chat/answer`, checked against the stored question and sent to the run's owner.
 * @throws HttpError as `answerRemote`, and 409 `already_resolved` / `timed_out` / `wait_closed` for a question no longer open (also in a finished run).
 */
export async function answerRemoteAwaited(text: string, req: IncomingMessage, url: URL, ctx: DecisionContext): Promise<RouteAnswer> {
  const waitMs = requestedWaitMs(req, url);
  const parsed = parseAnswerBody(text, req);
  let sentBody: Record<string, unknown>;
  try {
    sentBody = await answerRemote(ctx.cluster, parsed);
  } catch (error) {
    // A question answered before (the run may have finished since) is refused with the answer that stands.
    if (error instanceof HttpError && (error.code === 'question_not_found' || error.code === 'run_finished')) throw await closedWaitError(ctx.cluster.store, parsed.runId, parsed.requestId, error);
    throw error;
  }
  const base = { ...sentBody, statusUrl: waitStatusUrl(parsed.runId, parsed.requestId) };
  return settle(ctx, parsed.runId, [parsed.requestId], { kind: 'resolve', value: parsed.answer }, base, waitMs);
}

/** `POST /api/runs/:id/signal`, checked against the tree's stored event waits and sent to the run's owner. @throws HttpError as `signalRemote`, and 400 `invalid_wait`. */
export async function signalRemoteAwaited(runId: string, text: string, req: IncomingMessage, url: URL, ctx: DecisionContext): Promise<RouteAnswer> {
  const waitMs = requestedWaitMs(req, url);
  const body = parseSignalBody(text, req);
  const { waitIds, ...sentBody } = await signalRemote(ctx.cluster, runId, body);
  const base = { ...sentBody, statusUrls: waitIds.map((waitId) => waitStatusUrl(runId, waitId)) };
  return settle(ctx, runId, waitIds, { kind: 'resolve', value: body.payload }, base, waitMs);
}

/**
 * The answer once sent: without a wait, 202 (`delivered`). With one: 200 `applied: true` and
 * `appliedAt` once the log holds it; 409 (404 when the run is gone) with `error` and `standing`
 * (what the log holds instead) when it cannot take effect; 202 `applied: false` when the wait ran
 * out (the decision stays sent: the owner, or the next worker to claim the run, still applies
 * it). A signal counts as applied when it resolved at least one of the waits it was sent for.
 */
async function settle(ctx: DecisionContext, rootId: string, waitIds: readonly string[], sent: SentDecision, base: Record<string, unknown>, waitMs: number | undefined): Promise<RouteAnswer> {
  if (waitMs === undefined) return { status: 202, body: { ...base, delivered: DELIVERED } };
  const verdict = await awaitVerdict(() => lookAt(ctx.cluster.store, rootId, waitIds, sent), waitMs, (handler) => ctx.streams.onEvents(rootId, handler));
  switch (verdict.verdict) {
    case 'pending':
      return { status: 202, body: { ...base, applied: false, delivered: DELIVERED } };
    case 'applied':
      return { status: 200, body: { ...base, applied: true, appliedAt: verdict.at } };
    case 'refused':
      return { status: verdict.status, body: { error: { code: verdict.code, message: verdict.message }, ...base, applied: false, ...(verdict.standing ? { standing: verdict.standing } : {}) } };
  }
}

/** One verdict over the waits a decision was sent to: pending while any is; applied when one took it; else the first refusal. */
async function lookAt(store: DecisionContext['cluster']['store'], rootId: string, waitIds: readonly string[], sent: SentDecision): Promise<WaitVerdict> {
  const rootStatus = await store.runState(rootId);
  const verdicts: WaitVerdict[] = [];
  for (const waitId of waitIds) verdicts.push(verdictOf(await readState(store, rootId, waitId), sent, rootStatus, waitId));
  if (verdicts.some((v) => v.verdict === 'pending')) return { verdict: 'pending' };
  const applied = verdicts.filter((v): v is Extract<WaitVerdict, { verdict: 'applied' }> => v.verdict === 'applied');
  if (applied.length > 0) return { verdict: 'applied', at: Math.max(...applied.map((v) => v.at)) };
  return verdicts[0] ?? { verdict: 'pending' };
}

async function readState(store: CheckpointStore, rootId: string, waitId: string): Promise<StoredWaitState | undefined> {
  try {
    return await storedWaitState(store, rootId, waitId);
  } catch (error) {
    throw new HttpError(409, 'run_damaged', `Run '${rootId}' cannot be read: ${(error as Error).message}`);
  }
}

/**
 * `GET /api/runs/:id/waits/:waitId`: the wait (an approval by its approvalId, a call's wait by
 * its waitId) as the logs of the run tree hold it (`StoredWaitState`).
 * @throws HttpError 404 `run_not_found` / `wait_not_found`, 409 `run_damaged`.
 */
export async function waitStatus(store: DecisionContext['cluster']['store'], rootId: string, waitId: string): Promise<RouteAnswer> {
  if ((await store.runState(rootId)) === undefined) throw new HttpError(404, 'run_not_found', `No run '${rootId}'.`);
  const state = await readState(store, rootId, waitId);
  if (!state) throw new HttpError(404, 'wait_not_found', `No wait '${waitId}' in run '${rootId}'.`);
  return { status: 200, body: { ...state } };
}

/** The error for a decision on a wait that is not open: its refusal when the log has it decided, resolved or closed, else `fallback`. */
async function closedWaitError(store: CheckpointStore, rootId: string, waitId: string, fallback: HttpError): Promise<HttpError> {
  const state = await storedWaitState(store, rootId, waitId).catch(() => undefined);
  if (!state || state.state === 'open') return fallback;
  const refusal = refusalFor(state);
  return new HttpError(refusal.status, refusal.code, refusal.message);
}

/** Edited args are validated here when this node has the run's agent; the worker's run validates them again either way. */
async function checkRemoteEdits(ctx: DecisionContext, root: string, runId: string, tool: string, args: Record<string, unknown>): Promise<void> {
  const rootSaved = await ctx.cluster.store.load(root);
  const target = rootSaved && ctx.agents && agentFor(ctx.agents, rootSaved);
  const waiting = runId === root ? rootSaved : await ctx.cluster.store.load(runId);
  if (target && waiting) checkEditedArgs(target.agent, waiting.head.agent, tool, args);
}

/** Looks this long for a request not logged yet: its event and its log entry are written by separate transactions of the worker. */
const LOOK_AGAIN_MS = [50, 100, 200, 400];

type ApprovalLookup = { readonly approvalId?: string; readonly callId?: string };

async function waitingRequest(store: CheckpointStore, runId: string, body: ApprovalLookup): Promise<ApprovalRequestEntry> {
  for (let attempt = 0; ; attempt++) {
    const found = await findRequest(store, runId, body);
    if (found) return found;
    if (attempt >= LOOK_AGAIN_MS.length) throw await notWaiting(store, runId, body);
    await new Promise((resolve) => setTimeout(resolve, LOOK_AGAIN_MS[attempt]));
  }
}

/** 409 `already_decided` (or how else it ended) when the run's log has the call's approval over; else 404 `approval_not_found`. */
async function notWaiting(store: CheckpointStore, runId: string, body: ApprovalLookup): Promise<HttpError> {
  const notFound = new HttpError(404, 'approval_not_found', body.approvalId !== undefined ? `No approval '${body.approvalId}' is waiting.` : `No approval is waiting for call '${body.callId}' in run '${runId}'.`);
  const entries = runId ? ((await Promise.resolve(store.load(runId)).catch(() => undefined))?.entries ?? []) : [];
  const asked = entries.filter((e): e is ApprovalRequestEntry => e.kind === 'approval_request' && (body.approvalId !== undefined ? e.approvalId === body.approvalId : e.callId === body.callId)).at(-1);
  const state = asked && waitStateIn(runId, entries, asked.approvalId);
  if (!state || state.state === 'open') return notFound;
  const refusal = refusalFor(state);
  return new HttpError(refusal.status, refusal.code, refusal.message);
}

async function findRequest(store: CheckpointStore, runId: string, body: ApprovalLookup): Promise<ApprovalRequestEntry | undefined> {
  let pending: ApprovalRequestEntry[];
  try {
    pending = runId ? await pendingStoredApprovals(store, runId) : [];
  } catch (error) {
    throw new HttpError(409, 'run_damaged', `Run '${runId}' cannot be read: ${(error as Error).message}`);
  }
  const matches = pending.filter((p) => (body.approvalId !== undefined ? p.approvalId === body.approvalId : p.callId === body.callId) && (body.callId === undefined || p.callId === body.callId));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) throw new HttpError(409, 'approval_ambiguous', `Call '${body.callId}' is waiting more than once in run '${runId}': ${matches.map((m) => m.approvalId).join(', ')}. Decide by 'approvalId'.`);
  return undefined;
}
