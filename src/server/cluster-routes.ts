/**
 * The server's routes when workers run the runs (`troupe serve --workers external`): this node
 * only enqueues runs, streams their stored events, and sends messages to whichever worker owns
 * a run. It never writes a run's log: one owner per fact.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { nanoid } from 'nanoid';
import { EventsPruned } from '../errors.js';
import type { CheckpointStore, RunStatus } from '../store/checkpoint-store.js';
import type { RunJob } from '../store/postgres-queue.js';
import type { RunBus } from '../store/run-bus.js';
import { HttpError, SseStream, parseJsonObject, readBody, sendJson } from './http.js';
import type { RecoveryHost } from './run-recovery.js';
import { isFinished } from '../run-status.js';
import { RemoteStreams } from './remote-streams.js';
import { serveRemoteUIChat, streamUIMessages, unknownAgent } from './remote-ui-chat.js';
import { steerIdFor } from '../worker/message-applier.js';
import type { ClusterListing } from './run-index.js';
import { signalRunId } from './wait-routes.js';
import { answerRemoteAwaited, approveRemote, signalRemoteAwaited, waitStatus, type RouteAnswer } from './remote-decisions.js';

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
const WAIT = /^\/api\/runs\/([^/]+)\/waits\/([^/]+)$/;

function decodePart(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, what === 'run id' ? 'invalid_run_id' : 'invalid_wait_id', `The ${what} is not valid URL encoding.`);
  }
}

function answer(res: ServerResponse, { status, body }: RouteAnswer): true {
  sendJson(res, status, body);
  return true;
}

/** Runs and answers the route if it is one this mode handles; false otherwise (the caller's routes then apply). */
export async function serveClusterRoute(req: IncomingMessage, res: ServerResponse, pathname: string, url: URL, ctx: ClusterRouteContext): Promise<boolean> {
  const route = `${req.method ?? 'GET'} ${pathname}`;
  switch (route) {
    case 'POST /api/chat':
      await startRemoteRun(req, res, url, ctx);
      return true;
    case 'POST /api/chat/approve':
      return answer(res, await approveRemote(await readBody(req, ctx.maxBodyBytes), req, url, ctx));
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
      return answer(res, await answerRemoteAwaited(await readBody(req, ctx.maxBodyBytes), req, url, ctx));
  }
  const signalled = signalRunId(pathname);
  if (signalled !== undefined) {
    if (req.method !== 'POST') throw new HttpError(405, 'method_not_allowed', `Method ${req.method} is not allowed on ${pathname}.`, { allow: 'POST' });
    return answer(res, await signalRemoteAwaited(signalled, await readBody(req, ctx.maxBodyBytes), req, url, ctx));
  }
  const waitPath = WAIT.exec(pathname);
  if (waitPath) {
    if (req.method !== 'GET') throw new HttpError(405, 'method_not_allowed', `Method ${req.method} is not allowed on ${pathname}.`, { allow: 'GET' });
    const [runId, waitId] = [decodePart(waitPath[1]!, 'run id'), decodePart(waitPath[2]!, 'wait id')];
    return answer(res, await waitStatus(ctx.cluster.store, runId, waitId));
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
  const protocol = url.searchParams.get('protocol');
  if (protocol !== null) {
    if (protocol !== 'ui') throw new HttpError(400, 'invalid_protocol', `Unknown protocol '${protocol}'. Supported: ui (AI SDK UI message stream).`);
    await refusePruned(ctx.cluster.bus, runId, 0);
    streamUIMessages(res, runId, { streams: ctx.streams, sse: ctx.sse });
    return true;
  }
  const after = Number(req.headers['last-event-id'] ?? url.searchParams.get('after') ?? 0);
  const cursor = Number.isInteger(after) && after > 0 ? after : 0;
  await refusePruned(ctx.cluster.bus, runId, cursor);
  stream(res, runId, cursor, ctx);
  return true;
}

async function startRemoteRun(req: IncomingMessage, res: ServerResponse, url: URL, ctx: ClusterRouteContext): Promise<void> {
  if (url.searchParams.has('protocol')) {
    const { cluster, streams, sse, agentNames, maxBodyBytes, maxInputChars, isClosing } = ctx;
    return serveRemoteUIChat(req, res, url, { enqueue: (job) => cluster.store.enqueue(job), streams, sse, agentNames, maxBodyBytes, maxInputChars, isClosing });
  }
  const body = parseJsonObject(await readBody(req, ctx.maxBodyBytes), req, {
    agent: { type: 'string', nonEmpty: true },
    input: { type: 'string', maxLength: ctx.maxInputChars },
  });
  if (ctx.isClosing()) throw new HttpError(503, 'closing', 'The server is shutting down.');
  if (!ctx.agentNames.includes(body.agent!)) throw unknownAgent(body.agent!, ctx.agentNames);
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
