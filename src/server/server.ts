import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Agent } from '../agent.js';
import { InspectionFeed } from '../inspect/feed.js';
import { checkOptionKeys } from '../option-keys.js';
import { SERVER_OPTION_KEYS, SERVER_RUN_OPTION_KEYS, type AgentSource, type ServerOptions, type TroupeServer } from './server-options.js';
import type { CheckpointStore } from '../store/checkpoint-store.js';
import type { ContentPart } from '../message-parts.js';
import { awaitRestoredApproval, decideStoredApproval, recoverStoredRuns, type RecoveryHost } from './run-recovery.js';
import { serveRunAction } from './run-action-routes.js';
import { answerStoredHere, parseAnswerBody, parseSignalBody, signalLocal, signalRunId } from './wait-routes.js';
import { HttpError, SseStream, allowedHostSet, answerClientError, checkBearer, hostAllowed, parseJsonObject, readBody, sendError, sendJson, timeoutSettings } from './http.js';
import { findApproval } from './find-approval.js';
import { checkEditedArgs, parseApproveBody } from './approve-body.js';
import { agentGraph } from '../inspect/topology.js';
import { getRunMachine } from '../runtime/run-machine.js';
import { leaseWaitFields, listRuns, liveCallWaits, parseRunQuery, storedInput, storedRunDetail, storedRunView } from './run-index.js';
import { RunRegistry } from './run-registry.js';
import { ServerRun } from './runs.js';
import { findInspectorDir, serveStatic } from './static.js';
import { serveUIChat } from './ui-chat.js';
import { answerQuestion, steerRun } from './steer-routes.js';
import { ALLOWED, safeDecode } from './api-paths.js';
import { serveClusterRoute } from './cluster-routes.js';
import { checkCoverageSource, readCoverage } from './coverage-route.js';
import { RemoteStreams } from './remote-streams.js';

export type { AgentSource, ServerOptions, ServerRunOptions, ServerStats, TroupeServer } from './server-options.js';

const DEFAULT_APPROVAL_TIMEOUT_MS = 300_000;
/** Longest accepted denial reason (characters). */
const MAX_REASON_CHARS = 2_000;
const RUN_ID = /^\/api\/runs\/([^/]+)$/;
const AGENT_GRAPH = /^\/api\/agents\/([^/]+)\/graph$/;

/**
 * The troupe HTTP server (node:http, loopback by default):
 *
 * - `POST /api/chat {agent, input}` → SSE of run events (`X-Run-Id` header)
 * - `POST /api/chat/approve {approvalId | runId+callId, decision: "approve"|"deny", reason?}`
 *   (`approvalId` from `pendingApprovals` or the `approval_required` event; call ids are
 *   not unique across sub-runs; see `findApproval` for how a body is matched)
 * - `POST /api/chat/cancel {runId}`
 * - `GET /api/runs`, `GET /api/runs/:id`, `GET /api/agents`
 * - `GET /api/inspect` → SSE of inspector wire records (history replayed first)
 * - `GET /api/coverage` → the coverage report to lay onto the chart (`coverage` option)
 * - `GET /` → the inspector page (no token needed to load it; it asks for one)
 */
export async function createServer(options: ServerOptions): Promise<TroupeServer> {
  checkOptionKeys(options, SERVER_OPTION_KEYS, 'server');
  if (options.runOptions !== undefined) checkOptionKeys(options.runOptions, SERVER_RUN_OPTION_KEYS, 'server runOptions');
  checkCoverageSource(options.coverage);
  const agents = new Map(Object.entries(options.agents));
  const token = options.token ?? randomBytes(24).toString('base64url');
  if (token.length < 8 || /\s/.test(token)) throw new Error('token must be at least 8 characters without whitespace');
  const host = options.host ?? '127.0.0.1';
  // With a checkpoint store, approvals are durable (they survive restarts), so they wait until decided unless a timeout is set.
  const approvalTimeoutMs = options.approvalTimeoutMs ?? (options.checkpointStore || options.cluster ? Infinity : DEFAULT_APPROVAL_TIMEOUT_MS);
  if (!(approvalTimeoutMs >= 0)) throw new Error('approvalTimeoutMs must be a non-negative number');
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const maxInputChars = options.maxInputChars ?? 100_000;
  const maxEvents = options.maxEventsPerRun ?? 10_000;
  const maxEventBytes = options.maxEventBytesPerRun ?? 4 * 1024 * 1024;
  if (!(Number.isInteger(maxEvents) && maxEvents > 0)) throw new Error('maxEventsPerRun must be a positive integer');
  if (!(Number.isInteger(maxEventBytes) && maxEventBytes > 0)) throw new Error('maxEventBytesPerRun must be a positive integer');
  const allowedHosts = allowedHostSet(host, options.allowedHosts);
  const timeouts = timeoutSettings(options.requestTimeoutMs, options.headersTimeoutMs);
  const { cluster } = options;
  if (cluster && options.checkpointStore) throw new Error('Give cluster or checkpointStore, not both: with workers, the cluster store holds the runs.');
  // Runs are listed and shown from the store that holds them: the cluster's when workers run them.
  const runStore: CheckpointStore | undefined = cluster?.store ?? options.checkpointStore;
  const remote = cluster ? new RemoteStreams(cluster.bus, cluster.store) : undefined;
  const feed = new InspectionFeed({ mode: options.inspect ?? 'on-demand' });
  // The run chart's definition, so the page can draw stored runs and runs nobody inspected.
  feed.definitionFor(getRunMachine());
  const registry = new RunRegistry(options.maxRuns ?? 200);
  const streams = new Set<SseStream>();
  /** First user message of stored runs (it never changes), so listing does not reload every log. */
  const storedInputs = new Map<string, string | undefined>();
  let inspectorClients = 0;
  let closing = false;

  function startRun(agentName: string, input: string, parts?: readonly ContentPart[]): ServerRun {
    const source = agents.get(agentName);
    if (!source) {
      throw new HttpError(404, 'unknown_agent', `Unknown agent '${agentName}'. Registered agents: ${[...agents.keys()].join(', ') || '(none)'}.`);
    }
    let agent: Agent;
    try {
      agent = typeof source === 'function' ? source() : source;
    } catch (error) {
      throw new HttpError(500, 'agent_factory_failed', `Agent factory for '${agentName}' failed: ${(error as Error)?.message ?? String(error)}`);
    }
    const run = new ServerRun({ agentName, agent, input, ...(parts ? { parts } : {}), runOptions: options.runOptions ?? {}, approvalTimeoutMs, feed, maxEvents, maxEventBytes, ...(options.checkpointStore ? { checkpointStore: options.checkpointStore } : {}), ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}) });
    registry.add(run);
    return run;
  }

  // Stored runs: resumed on start (those whose process died or that are suspended), on request, and when a decision arrives for one.
  const recovery: RecoveryHost | undefined = options.checkpointStore
    ? {
        store: options.checkpointStore,
        agents,
        isLive: (runId) => registry.get(runId)?.finished === false,
        resume: (runId, agentName, agent, saved, startedAt) => {
          const stored = { usage: saved.head.usage, ...(startedAt !== undefined ? { startedAt } : {}) };
          const run = new ServerRun({ agentName, agent, input: storedInput(saved) ?? '', stored, resumeId: runId, runOptions: options.runOptions ?? {}, approvalTimeoutMs, feed, maxEvents, maxEventBytes, checkpointStore: options.checkpointStore!, ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}) });
          registry.add(run);
          return run;
        },
      }
    : undefined;

  async function handleApi(req: IncomingMessage, res: ServerResponse, pathname: string, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const route = `${method} ${pathname}`;
    if (cluster && remote) {
      const ctx = { cluster, streams: remote, sse: streams, agentNames: [...agents.keys()], agents, maxBodyBytes, maxInputChars, maxReasonChars: MAX_REASON_CHARS, isClosing: () => closing };
      if (await serveClusterRoute(req, res, pathname, url, ctx)) return;
    }
    switch (route) {
      case 'POST /api/chat': {
        // `?protocol=ui`: the AI SDK UI message stream (ui-chat.ts).
        if (url.searchParams.has('protocol')) return serveUIChat(req, res, url, { maxBodyBytes, maxInputChars, agentNames: [...agents.keys()], isClosing: () => closing, startRun, streams });
        const body = parseJsonObject(await readBody(req, maxBodyBytes), req, {
          agent: { type: 'string', nonEmpty: true },
          input: { type: 'string', maxLength: maxInputChars },
        });
        if (closing) throw new HttpError(503, 'closing', 'The server is shutting down.');
        const run = startRun(body.agent!, body.input!);
        const sse = new SseStream(res, { 'x-run-id': run.id });
        streams.add(sse);
        // Only this subscription ends with the client; the run keeps going server-side.
        const unsubscribe = run.subscribe({
          event: (event, index) => sse.send(JSON.stringify(event), { event: event.type, id: index }),
          end: () => sse.end(),
        });
        sse.onClose(() => {
          unsubscribe();
          streams.delete(sse);
        });
        return;
      }
      case 'POST /api/chat/approve': {
        const body = parseApproveBody(await readBody(req, maxBodyBytes), req, MAX_REASON_CHARS);
        const stored = await decideStoredApproval(recovery, body);
        if (stored) return sendJson(res, 200, stored);
        let found;
        try {
          found = findApproval(registry.active(), body);
        } catch (error) {
          // A run resumed here that has not reopened it yet (restoring, or waiting for a lease): wait for it, or 409 run_locked.
          if (!(error instanceof HttpError) || error.code !== 'approval_not_found') throw error;
          await awaitRestoredApproval(recovery, (id) => registry.get(id), body, error);
          found = findApproval(registry.active(), body);
        }
        const { run, approval } = found;
        if (body.args !== undefined) checkEditedArgs(run.agent, approval.agent, approval.tool, body.args);
        if (!run.decide(approval.approvalId, body.approve, body.reason, body.args)) {
          // Decided by someone else between the lookup and now.
          throw new HttpError(404, 'approval_not_found', `No approval '${approval.approvalId}' is waiting.`);
        }
        return sendJson(res, 200, { runId: approval.runId, approvalId: approval.approvalId, callId: approval.callId, decision: body.approve ? 'approve' : 'deny' });
      }
      case 'POST /api/chat/steer': {
        const { status, body } = steerRun(registry, await readBody(req, maxBodyBytes), req);
        return sendJson(res, status, body);
      }
      case 'POST /api/chat/answer': {
        const text = await readBody(req, maxBodyBytes);
        const parsed = parseAnswerBody(text, req);
        // A run this server does not run live (parked in the store): the answer is recorded and the run resumed here.
        if (recovery && registry.get(parsed.runId)?.finished !== false) return sendJson(res, 200, await answerStoredHere(recovery, parsed));
        const { status, body } = answerQuestion(registry, text, req);
        return sendJson(res, status, body);
      }
      case 'POST /api/chat/cancel': {
        const body = parseJsonObject(await readBody(req, maxBodyBytes), req, { runId: { type: 'string', nonEmpty: true } });
        const run = registry.get(body.runId!);
        if (!run) throw new HttpError(404, 'run_not_found', `No run '${body.runId}'.`);
        if (run.finished) throw new HttpError(409, 'run_finished', `Run '${run.id}' has already finished (${run.status}).`);
        run.cancel('cancelled via API');
        return sendJson(res, 202, { runId: run.id, status: 'cancelling' });
      }
      case 'GET /api/runs':
        return sendJson(res, 200, { runs: await listRuns(registry, runStore, parseRunQuery(url), storedInputs, cluster ? { queued: await cluster.store.listQueued() } : undefined) });
      case 'GET /api/agents':
        return sendJson(res, 200, { agents: [...agents.keys()] });
      case 'GET /api/coverage':
        return sendJson(res, 200, await readCoverage(options.coverage));
      case 'GET /api/inspect': {
        const lastId = Number(req.headers['last-event-id'] ?? url.searchParams.get('after') ?? 0);
        const sse = new SseStream(res);
        streams.add(sse);
        inspectorClients++;
        const unsubscribe = feed.subscribe((record) => sse.send(JSON.stringify(record), { id: record.seq }), {
          after: Number.isFinite(lastId) && lastId > 0 ? lastId : 0,
        });
        sse.onClose(() => {
          unsubscribe();
          inspectorClients--;
          streams.delete(sse);
        });
        return;
      }
    }
    const signalled = signalRunId(pathname);
    if (signalled !== undefined) {
      if (method !== 'POST') throw new HttpError(405, 'method_not_allowed', `Method ${method} is not allowed on ${pathname}.`, { allow: 'POST' });
      return sendJson(res, 200, await signalLocal(registry, recovery, signalled, parseSignalBody(await readBody(req, maxBodyBytes), req)));
    }
    if (await serveRunAction(pathname, method, res, { registry, recovery, streams })) return;
    const runMatch = RUN_ID.exec(pathname);
    if (runMatch) {
      if (method !== 'GET') throw new HttpError(405, 'method_not_allowed', `Method ${method} is not allowed on ${pathname}.`, { allow: 'GET' });
      let id: string;
      try {
        id = decodeURIComponent(runMatch[1]!);
      } catch {
        throw new HttpError(400, 'invalid_run_id', 'Run id is not valid URL encoding.');
      }
      const run = registry.get(id);
      const stored = runStore ? await storedRunView(runStore, id) : undefined;
      if (run) {
        const { dropped } = run;
        return sendJson(res, 200, { ...run.summary(), waits: liveCallWaits(run), ...(runStore ? await leaseWaitFields(run, runStore) : {}), source: 'live', droppedEvents: dropped.count, droppedEventBytes: dropped.bytes, eventBytes: run.eventBytes, eventLog: run.events, ...(stored ? { log: stored } : {}) });
      }
      if (!stored) throw new HttpError(404, 'run_not_found', `No run '${id}'.`);
      const listed = (await Promise.resolve(runStore?.list?.()).catch(() => undefined))?.find((summary) => summary.runId === id);
      return sendJson(res, 200, await storedRunDetail(runStore!, id, stored, listed));
    }
    const graphMatch = AGENT_GRAPH.exec(pathname);
    if (graphMatch && method === 'GET') {
      const name = safeDecode(graphMatch[1]!);
      const source = agents.get(name);
      if (!source) throw new HttpError(404, 'unknown_agent', `Unknown agent '${name}'. Registered agents: ${[...agents.keys()].join(', ') || '(none)'}.`);
      let agent: Agent;
      try {
        agent = typeof source === 'function' ? source() : source;
      } catch (error) {
        throw new HttpError(500, 'agent_factory_failed', `Agent factory for '${name}' failed: ${(error as Error)?.message ?? String(error)}`);
      }
      return sendJson(res, 200, { agent: name, graph: agentGraph(agent) });
    }
    const allowed = ALLOWED.get(pathname);
    if (allowed) throw new HttpError(405, 'method_not_allowed', `Method ${method} is not allowed on ${pathname}.`, { allow: allowed });
    throw new HttpError(404, 'not_found', `No API endpoint ${pathname}.`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Before anything else, on every route: a page on another origin that rebinds its name to 127.0.0.1 sends its own Host.
    if (!hostAllowed(req.headers.host, allowedHosts)) {
      req.resume();
      const shown = JSON.stringify(req.headers.host ?? '').slice(0, 200);
      return sendError(res, new HttpError(403, 'host_not_allowed', `Host ${shown} is not allowed. Allowed: ${[...allowedHosts].join(', ')} (add names with allowedHosts / --allowed-host).`, { connection: 'close' }));
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      return sendError(res, new HttpError(400, 'bad_url', 'Malformed request URL.'));
    }
    const pathname = url.pathname;
    try {
      if (pathname === '/api' || pathname.startsWith('/api/')) {
        if (!checkBearer(req, token)) {
          req.resume();
          throw new HttpError(401, 'unauthorized', 'Missing or invalid bearer token.', { 'www-authenticate': 'Bearer realm="troupe"' });
        }
        await handleApi(req, res, pathname, url);
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'method_not_allowed', `Method ${req.method} is not allowed on ${pathname}.`, { allow: 'GET, HEAD' });
      await serveStatic(pathname, findInspectorDir(options.inspectorDir), res, req.method === 'HEAD');
    } catch (error) {
      if (error instanceof HttpError) return sendError(res, error);
      sendError(res, new HttpError(500, 'internal_error', `Internal server error: ${(error as Error)?.message ?? String(error)}`));
    }
  }

  // The timeouts cover reading the request only, so long-lived SSE responses are not cut; idle keep-alive sockets still close.
  // Listening before serving: a client's first stream must not miss notices.
  await remote?.start();
  const http = createHttpServer({ ...timeouts }, (req, res) => void handle(req, res));
  http.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const recovered = recovery ? await recoverStoredRuns(recovery) : [];
  const address = http.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = `http://${urlHost}:${address.port}`;

  return {
    url: baseUrl,
    host: address.address,
    port: address.port,
    token,
    inspectorUrl: `${baseUrl}/#token=${encodeURIComponent(token)}`,
    feed,
    http,
    stats: () => ({
      runs: registry.list().length,
      activeRuns: registry.active().length,
      chatClients: registry.list().reduce((n, run) => n + run.subscriberCount, 0) + (remote?.watcherCount ?? 0),
      inspectorClients,
    }),
    run: (id) => registry.get(id),
    recovered,
    async close() {
      closing = true;
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      for (const stream of [...streams]) stream.end();
      http.closeIdleConnections();
      const live = registry.active();
      // With a store, a run that waits for a person parks (stored as suspended, its lease
      // released) so the next start resumes it at the same wait; the others are cancelled.
      const waiting = options.checkpointStore ? live.filter((run) => run.pendingApprovals().length > 0) : [];
      for (const run of waiting) run.handle.suspend();
      for (const run of live) if (!waiting.includes(run)) run.cancel('server closing');
      const bound = new Promise((r) => setTimeout(r, 2_000).unref());
      await Promise.race([Promise.all(live.map((run) => run.done)), bound]);
      // A waiting run that could not park in time (a call of its batch still ran) is cancelled after all.
      for (const run of waiting) if (!run.finished) run.cancel('server closing');
      await Promise.race([Promise.all(waiting.map((run) => run.done)), new Promise((r) => setTimeout(r, 2_000).unref())]);
      http.closeAllConnections();
      await closed;
      await remote?.close();
    },
  };
}
