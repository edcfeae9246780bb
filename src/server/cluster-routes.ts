/**
 * The server's routes when workers run the runs (`troupe serve --workers external`): this node
 * only enqueues runs, streams their stored events, and sends messages to whichever worker owns
 * a run. It never writes a run's log: one owner per fact.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { nanoid } from 'nanoid';
import { EventsPruned } from '../errors.js';
import { runOfApproval } from '../runtime/approvals.js';
import { pendingStoredApprovals } from '../runtime/decide.js';
import type { ApprovalRequestEntry, CheckpointStore, RunStatus } from '../store/checkpoint-store.js';
import type { RunJob } from '../store/postgres-queue.js';
import type { RunBus } from '../store/run-bus.js';
import { checkEditedArgs, parseApproveBody } from './approve-body.js';
import { HttpError, SseStream, parseJsonObject, readBody, sendJson } from './http.js';
import { agentFor, type RecoveryHost } from './run-recovery.js';
import { isFinished } from '../run-status.js';
import { RemoteStreams } from './remote-streams.js';
import { steerIdFor } from '../worker/message-applier.js';
import type { ClusterListing } from './run-index.js';
import { answerRemote, parseAnswerBody, parseSignalBody, signalRemote, signalRunId } from './wait-routes.js';

/** What a server node needs to hand runs to workers (PostgresCheckpointStore + PostgresRunBus on one database). */
export interface ServerCluster {
  readonly store: CheckpointStore & {
    enqueue(job: RunJob): Promise<void>;
    runState(runId: string): Promise<RunStatus | undefined>;
    listQueued(): Promise<ClusterListing['queued']>;
  };
  readonly bus: RunBus;
}

export interface ClusterRouteContext {
  readonly cluster: ServerCluster;
  readonly streams: RemoteStreams;
  readonly sse: Set<SseStream>;
  readonly agentNames: readonly string[];
  /** The registered agents, to validate edited approval args before they are sent (the worker validates them again). */
  readonly agents?: RecoveryHost['agents'];
  readonly maxBodyBytes: number;
  readonly maxInputChars: number;
  readonly maxReasonChars: number;
  readonly isClosing: () => boolean;
}

const STREAM = /^\/api\/runs\/([^/]+)\/(stream|resume)$/;

/** Runs and answers the route if it is one this mode handles; false otherwise (the caller's routes then apply). */
export async function serveClusterRoute(req: IncomingMessage, res: ServerResponse, pathname: string, url: URL, ctx: ClusterRouteContext): Promise<boolean> {
  const route = `${req.method ?? 'GET'} ${pathname}`;
  switch (route) {
    case 'POST /api/chat':
      await startRemoteRun(req, res, url, ctx);
      return true;
    case 'POST /api/chat/approve':
      sendJson(res, 202, await approveRemote(await readBody(req, ctx.maxBodyBytes), req, ctx));
      return true;
    case 'POST /api/chat/cancel': {
      const body = parseJsonObject(await readBody(req, ctx.maxBodyBytes), req, { runId: { type: 'string', nonEmpty: true } });
      const runId = body.runId!;
      await liveState(ctx.cluster, runId);
      await ctx.cluster.bus.send(runId, { kind: 'cancel', reason: 'cancelled via API' });
      sendJson(res, 202, { runId, status: 'cancelling' });
      return true;
    }
    case 'POST /api/chat/steer': {
      const body = parseJsonObject(await readBody(req, ctx.maxBodyBytes), req, {
        runId: { type: 'string', nonEmpty: true },
        text: { type: 'string', nonEmpty: true, maxLength: 20_000 },
        queue: { type: 'enum', values: ['steer', 'follow_up'], optional: true },
      });
      const runId = body.runId!;
      await liveState(ctx.cluster, runId);
      const queue = (body.queue ?? 'steer') as 'steer' | 'follow_up';
      const sent = await ctx.cluster.bus.send(runId, { kind: 'steer', text: body.text!, queue });
      sendJson(res, 202, { runId, id: steerIdFor(sent.id), queue });
      return true;
    }
    case 'POST /api/chat/answer':
      sendJson(res, 202, await answerRemote(ctx.cluster, parseAnswerBody(await readBody(req, ctx.maxBodyBytes), req)));
      return true;
  }
  const signalled = signalRunId(pathname);
  if (signalled !== undefined) {
    if (req.method !== 'POST') throw new HttpError(405, 'method_not_allowed', `Method ${req.method} is not allowed on ${pathname}.`, { allow: 'POST' });
    sendJson(res, 202, await signalRemote(ctx.cluster, signalled, parseSignalBody(await readBody(req, ctx.maxBodyBytes), req)));
    return true;
  }
  const match = STREAM.exec(pathname);
  if (!match) return false;
  let runId: string;
  try {
    runId = decodeURIComponent(match[1]!);
  } catch {
    throw new HttpError(400, 'invalid_run_id', 'Run id is not valid URL encoding.');
  }
  if (match[2] === 'resume') {
    throw new HttpError(409, 'resumed_by_workers', `Run '${runId}' is resumed by the workers on their own (a stored running or decided run is taken by the next free worker).`);
  }
  if (req.method !== 'GET') throw new HttpError(405, 'method_not_allowed', `Method ${req.method} is not allowed on ${pathname}.`, { allow: 'GET' });
  if ((await ctx.cluster.store.runState(runId)) === undefined) throw new HttpError(404, 'run_not_found', `No run '${runId}'.`);
  const after = Number(req.headers['last-event-id'] ?? url.searchParams.get('after') ?? 0);
  const cursor = Number.isInteger(after) && after > 0 ? after : 0;
  await refusePruned(ctx.cluster.bus, runId, cursor);
  stream(res, runId, cursor, ctx);
  return true;
}

async function startRemoteRun(req: IncomingMessage, res: ServerResponse, url: URL, ctx: ClusterRouteContext): Promise<void> {
  if (url.searchParams.has('protocol')) throw new HttpError(501, 'not_supported_with_workers', 'The AI SDK UI stream (?protocol=ui) is not available when workers run the runs; use the plain event stream.');
  const body = parseJsonObject(await readBody(req, ctx.maxBodyBytes), req, {
    agent: { type: 'string', nonEmpty: true },
    input: { type: 'string', maxLength: ctx.maxInputChars },
  });
  if (ctx.isClosing()) throw new HttpError(503, 'closing', 'The server is shutting down.');
  if (!ctx.agentNames.includes(body.agent!)) {
    throw new HttpError(404, 'unknown_agent', `Unknown agent '${body.agent}'. Registered agents: ${ctx.agentNames.join(', ') || '(none)'}.`);
  }
  const runId = `run_${nanoid(12)}`;
  await ctx.cluster.store.enqueue({ runId, agent: body.agent!, input: body.input! });
  stream(res, runId, 0, ctx);
}

function stream(res: ServerResponse, runId: string, after: number, ctx: ClusterRouteContext): void {
  const sse = new SseStream(res, { 'x-run-id': runId });
  ctx.sse.add(sse);
  const unwatch = ctx.streams.watch(runId, after, {
    event: (event, id) => sse.send(JSON.stringify(event), { event: event.type, id }),
    pruned: (error) => sse.send(JSON.stringify(prunedFrame(error)), { event: 'events_pruned' }),
    end: () => sse.end(),
  });
  sse.onClose(() => {
    unwatch();
    ctx.sse.delete(sse);
  });
}

/** 410 `events_pruned` before a stream opens when the events after `cursor` were pruned (the log is kept: the message says where). */
async function refusePruned(bus: RunBus, runId: string, cursor: number): Promise<void> {
  try {
    await bus.events(runId, cursor, 1);
  } catch (error) {
    if (error instanceof EventsPruned) throw new HttpError(410, 'events_pruned', error.message);
    throw error;
  }
}

/** The SSE frame `events_pruned` that ends a stream whose next events were pruned while it was open. */
export function prunedFrame(error: EventsPruned): Record<string, unknown> {
  return { type: 'events_pruned', runId: error.runId, through: error.through, prunedAt: error.prunedAt, error: { name: error.name, code: error.code, message: error.message } };
}

/** The run exists and is not over (a message to it can still take effect). */
async function liveState(cluster: ServerCluster, runId: string): Promise<void> {
  if (runId.includes('/')) throw new HttpError(400, 'invalid_run_id', `'${runId}' is a sub-run; address its root run '${runId.split('/')[0]}'.`);
  const state = await cluster.store.runState(runId);
  if (state === undefined) throw new HttpError(404, 'run_not_found', `No run '${runId}'.`);
  if (isFinished(state)) throw new HttpError(409, 'run_finished', `Run '${runId}' has already finished (${state}).`);
}

/**
 * `POST /api/chat/approve`: finds the waiting call in the run's log (the request is logged when
 * the call starts waiting) and sends the decision to the run's owner. 202: it is delivered
 * once the owning worker applies it; the run's events show the outcome.
 */
async function approveRemote(text: string, req: IncomingMessage, ctx: ClusterRouteContext): Promise<Record<string, unknown>> {
  const body = parseApproveBody(text, req, ctx.maxReasonChars);
  if (body.approvalId === undefined && (body.callId === undefined || body.runId === undefined)) throw new HttpError(400, 'invalid_request', "Give 'approvalId', or 'runId' and 'callId'.");
  const runId = body.approvalId !== undefined ? runOfApproval(body.approvalId) : body.runId!;
  const request = await waitingRequest(ctx.cluster.store, runId, body);
  const root = runId.split('/')[0]!;
  if (body.args !== undefined) await checkRemoteEdits(ctx, root, runId, request.tool, body.args);
  const message = { kind: 'approve' as const, approvalId: request.approvalId, approved: body.approve, ...(body.reason ? { reason: body.reason } : {}), ...(body.args ? { args: body.args } : {}), by: 'api' };
  await ctx.cluster.bus.send(root, message);
  return { runId: request.runId ?? runId, approvalId: request.approvalId, callId: request.callId, decision: body.approve ? 'approve' : 'deny', delivered: 'sent to the run’s worker' };
}

/** Edited args are validated here when this node has the run's agent; the worker's run validates them again either way. */
async function checkRemoteEdits(ctx: ClusterRouteContext, root: string, runId: string, tool: string, args: Record<string, unknown>): Promise<void> {
  const rootSaved = await ctx.cluster.store.load(root);
  const target = rootSaved && ctx.agents && agentFor(ctx.agents, rootSaved);
  const waiting = runId === root ? rootSaved : await ctx.cluster.store.load(runId);
  if (target && waiting) checkEditedArgs(target.agent, waiting.head.agent, tool, args);
}

/** Looks this long for a request not logged yet: its event and its log entry are written by separate transactions of the worker. */
const LOOK_AGAIN_MS = [50, 100, 200, 400];

async function waitingRequest(store: CheckpointStore, runId: string, body: { readonly approvalId?: string; readonly callId?: string }): Promise<ApprovalRequestEntry & { runId?: string }> {
  for (let attempt = 0; ; attempt++) {
    const found = await findRequest(store, runId, body);
    if (found || attempt >= LOOK_AGAIN_MS.length) return found ?? notFound(runId, body);
    await new Promise((resolve) => setTimeout(resolve, LOOK_AGAIN_MS[attempt]));
  }
}

function notFound(runId: string, body: { readonly approvalId?: string; readonly callId?: string }): never {
  throw new HttpError(404, 'approval_not_found', body.approvalId !== undefined ? `No approval '${body.approvalId}' is waiting.` : `No approval is waiting for call '${body.callId}' in run '${runId}'.`);
}

async function findRequest(store: CheckpointStore, runId: string, body: { readonly approvalId?: string; readonly callId?: string }): Promise<(ApprovalRequestEntry & { runId?: string }) | undefined> {
  let pending: ApprovalRequestEntry[];
  try {
    pending = runId ? await pendingStoredApprovals(store, runId) : [];
  } catch (error) {
    throw new HttpError(409, 'run_damaged', `Run '${runId}' cannot be read: ${(error as Error).message}`);
  }
  const matches = pending.filter((p) => (body.approvalId !== undefined ? p.approvalId === body.approvalId : p.callId === body.callId) && (body.callId === undefined || p.callId === body.callId));
  if (matches.length === 1) return { ...matches[0]!, runId };
  if (matches.length > 1) throw new HttpError(409, 'approval_ambiguous', `Call '${body.callId}' is waiting more than once in run '${runId}': ${matches.map((m) => m.approvalId).join(', ')}. Decide by 'approvalId'.`);
  return undefined;
}
