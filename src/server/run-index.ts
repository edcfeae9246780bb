import { pendingStoredApprovals } from '../runtime/decide.js';
import type { WireError } from '../inspect/wire.js';
import { restoreRun } from '../runtime/resume.js';
import { RUN_STATUSES, isFinished, type RunStatus } from '../run-status.js';
import type { CheckpointStore, StoredRun } from '../store/checkpoint-store.js';
import type { Message, Usage } from '../types.js';
import { HttpError } from './http.js';
import type { RunRegistry } from './run-registry.js';
import type { HeldLease } from '../store/claim-lease.js';
import { leaseWaitOf } from './run-readiness.js';
import type { PendingApprovalView, RunSummary, ServerRun } from './runs.js';
import { callWaitOfView, storedTreeWaits, type CallWaitView } from './tree-waits.js';


/** One row of `GET /api/runs`: a live run of this process or a run found only in the checkpoint store. */
export interface RunListEntry {
  readonly runId: string;
  readonly source: 'live' | 'stored';
  readonly agent: string;
  /** The first user message (stored runs: from the log's first `input` entry). */
  readonly input: string | undefined;
  readonly status: RunStatus;
  readonly startedAt: number;
  readonly endedAt: number | undefined;
  readonly durationMs: number | undefined;
  readonly usage: Usage | undefined;
  readonly turns: number | undefined;
  readonly output: string | undefined;
  readonly error: WireError | undefined;
  readonly pendingApprovals: readonly PendingApprovalView[];
}

export interface RunListQuery {
  readonly status: readonly RunStatus[] | undefined;
  /** Case-insensitive text matched against run id, agent, input, output and error message. */
  readonly q: string | undefined;
  readonly limit: number;
}

/**
 * Parses `?status=a,b&q=text&limit=n`.
 * @throws HttpError 400 `invalid_query` for an unknown status or a bad limit.
 */
export function parseRunQuery(url: URL): RunListQuery {
  const raw = url.searchParams.getAll('status').flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
  for (const status of raw) {
    if (!(RUN_STATUSES as readonly string[]).includes(status)) throw new HttpError(400, 'invalid_query', `Unknown status '${status}'. Use one of ${RUN_STATUSES.join(', ')}.`);
  }
  const limitText = url.searchParams.get('limit');
  const limit = limitText === null ? 500 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new HttpError(400, 'invalid_query', `limit must be an integer from 1 to 10000, got '${limitText}'.`);
  const q = url.searchParams.get('q')?.trim();
  return { status: raw.length > 0 ? (raw as RunStatus[]) : undefined, q: q ? q : undefined, limit };
}

function fromLive(run: RunSummary): RunListEntry {
  return {
    runId: run.runId,
    source: 'live',
    agent: run.agent,
    input: run.input,
    status: run.status,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    durationMs: run.endedAt !== undefined ? run.endedAt - run.startedAt : undefined,
    usage: run.usage,
    turns: run.turns,
    output: run.output,
    error: run.error,
    pendingApprovals: run.pendingApprovals,
  };
}

/** The text of the log's first `input` entry. */
export function storedInput(run: StoredRun): string | undefined {
  const first = run.entries.find((entry) => entry.kind === 'input') as { message?: Message } | undefined;
  const content = first?.message?.content;
  return typeof content === 'string' ? content : undefined;
}

/**
 * Live runs merged with the checkpoint store's runs (a run in both is shown once, live),
 * newest first, filtered by status and text. A store that fails to list or load is
 * reported, not hidden: the error becomes a 500 `store_error` with its message.
 */
/** With workers (`--workers external`): runs enqueued but not started, and approvals of runs on other processes. */
export interface ClusterListing {
  readonly queued: readonly { readonly runId: string; readonly agent: string; readonly input: string | undefined; readonly enqueuedAt: number }[];
}

export async function listRuns(registry: RunRegistry, store: CheckpointStore | undefined, query: RunListQuery, inputs: Map<string, string | undefined>, cluster?: ClusterListing): Promise<RunListEntry[]> {
  const rows = await Promise.all(registry.list().map(async (run) => ({ ...fromLive(run.summary()), ...(store ? await leaseWaitFields(run, store) : {}) })));
  for (const job of cluster?.queued ?? []) {
    rows.push({ runId: job.runId, source: 'stored', agent: job.agent, input: job.input, status: 'queued', startedAt: job.enqueuedAt, endedAt: undefined, durationMs: undefined, usage: undefined, turns: undefined, output: undefined, error: undefined, pendingApprovals: [] });
  }
  const live = new Set(rows.map((row) => row.runId));
  if (store?.list) {
    let stored;
    try {
      stored = await store.list();
    } catch (error) {
      throw new HttpError(500, 'store_error', `Listing stored runs failed: ${(error as Error)?.message ?? String(error)}`);
    }
    for (const summary of stored) {
      // A sub-run's own log (`<root>/<turn>.<index>`) belongs to its root run's row.
      if (live.has(summary.runId) || summary.runId.includes('/')) continue;
      const { head } = summary;
      const finished = isFinished(head.status);
      if (!inputs.has(summary.runId)) {
        const loaded = await Promise.resolve(store.load(summary.runId)).catch(() => undefined);
        inputs.set(summary.runId, loaded ? storedInput(loaded) : undefined);
      }
      rows.push({
        runId: summary.runId,
        source: 'stored',
        agent: head.agent,
        input: inputs.get(summary.runId),
        status: head.status,
        startedAt: summary.createdAt,
        endedAt: finished ? summary.updatedAt : undefined,
        durationMs: summary.updatedAt - summary.createdAt,
        usage: head.usage,
        turns: head.turn,
        output: head.output,
        error: head.error ? { name: head.error.name, code: undefined, message: head.error.message } : undefined,
        // A run 'running' in the store is live elsewhere (a worker, another process) or its process died: its log says what waits.
        pendingApprovals: head.status === 'suspended' || head.status === 'running' ? await suspendedApprovals(store, summary.runId, head.agent) : [],
      });
    }
  }
  const needle = query.q?.toLowerCase();
  return rows
    .filter((row) => !query.status || query.status.includes(row.status))
    .filter((row) => !needle || [row.runId, row.agent, row.input, row.output, row.error?.name, row.error?.message].some((text) => text?.toLowerCase().includes(needle)))
    .sort((a, b) => b.startedAt - a.startedAt)
    .slice(0, query.limit);
}

/** `GET /api/runs/:id` for a run the store has: its log, and what restoring it gives. */
export interface StoredRunView {
  readonly schemaVersion: number | undefined;
  readonly head: StoredRun['head'];
  /** Every entry in append order, also kinds this build does not know. */
  readonly entries: readonly unknown[];
  /** The transcript `restoreRun` rebuilds from the known entries. */
  readonly transcript: readonly Message[];
  /** Entries of kinds this build does not know (shown generically by the page). */
  readonly unknownEntries: number;
  /** Set when the known entries do not restore (a damaged log): the message. */
  readonly restoreError: string | undefined;
}

/** Every entry kind of this build's log format (format 2); others come from a newer troupe. */
const KNOWN = new Set<string>(['input', 'reply', 'result', 'turn_end', 'handoff', 'approval_request', 'approval_decision', 'subrun_start', 'subrun_end']);

/** The stored log of `runId` as the page shows it; undefined when the store has no such run. */
export async function storedRunView(store: CheckpointStore, runId: string): Promise<StoredRunView | undefined> {
  let run: StoredRun | undefined;
  try {
    run = await store.load(runId);
  } catch (error) {
    throw new HttpError(500, 'store_error', `Loading run '${runId}' failed: ${(error as Error)?.message ?? String(error)}`);
  }
  if (!run) return undefined;
  const known = run.entries.filter((entry) => KNOWN.has(entry.kind));
  let transcript: readonly Message[] = [];
  let restoreError: string | undefined;
  try {
    transcript = restoreRun(known, run.head).transcript;
  } catch (error) {
    restoreError = (error as Error)?.message ?? String(error);
  }
  return { schemaVersion: run.schemaVersion, head: run.head, entries: run.entries, transcript, unknownEntries: run.entries.length - known.length, restoreError };
}

/**
 * A live run of this server that waits for another owner's lease (`lease_waiting`): its
 * stored pending approvals (deciding one answers 409 `run_locked` until the run holds the
 * lease) and the lease it waits for. Nothing for any other run.
 */
export async function leaseWaitFields(run: ServerRun, store: CheckpointStore): Promise<{ pendingApprovals?: PendingApprovalView[]; lease?: HeldLease }> {
  const held = leaseWaitOf(run);
  if (!held) return {};
  return { pendingApprovals: await suspendedApprovals(store, run.id, run.agent.name), lease: held };
}

/** A parked run's approvals, from its log: they can be decided through POST /api/chat/approve. */
async function suspendedApprovals(store: CheckpointStore, runId: string, agent: string): Promise<PendingApprovalView[]> {
  const pending = await pendingStoredApprovals(store, runId).catch(() => []);
  return pending.map((request) => ({ approvalId: request.approvalId, runId, callId: request.callId, tool: request.tool, args: undefined, path: [agent], agent, since: request.requestedAt, deadline: undefined }));
}

async function treeWaitFields(store: CheckpointStore, runId: string): Promise<{ pendingApprovals: PendingApprovalView[]; waits: CallWaitView[] }> {
  const { pendingApprovals, waits } = await storedTreeWaits(store, runId).catch(() => ({ pendingApprovals: [], waits: [] }));
  return { pendingApprovals, waits };
}

/** A live run's open call waits (questions, events, timers) across its tree, as `GET /api/runs/:id` lists them. */
export function liveCallWaits(run: ServerRun): CallWaitView[] {
  return run.handle.waits.pending().flatMap((view) => callWaitOfView(view) ?? []);
}

/** A run only the checkpoint store knows (e.g. from before a restart), shaped like a live run's detail. */
export async function storedRunDetail(
  store: CheckpointStore,
  runId: string,
  stored: NonNullable<Awaited<ReturnType<typeof storedRunView>>>,
  listed: { createdAt: number; updatedAt: number; lease?: { owner: string; expiresAt: number } } | undefined,
): Promise<Record<string, unknown>> {
  const { head } = stored;
  const finished = isFinished(head.status);
  return {
    runId,
    source: 'stored',
    agent: head.agent,
    input: stored.transcript.find((m) => m.role === 'user')?.content,
    status: head.status,
    startedAt: listed?.createdAt,
    endedAt: finished ? listed?.updatedAt : undefined,
    output: head.output,
    error: head.error ? { name: head.error.name, code: undefined, message: head.error.message } : undefined,
    usage: head.usage,
    turns: head.turn,
    // Wherever the tree runs (a worker, parked in the store): its open waits, sub-runs included, from the logs.
    ...(head.status === 'suspended' || head.status === 'running' ? await treeWaitFields(store, runId) : { pendingApprovals: [], waits: [] }),
    ...(listed?.lease && listed.lease.expiresAt > Date.now() ? { lease: { owner: listed.lease.owner, expiresAt: listed.lease.expiresAt } } : {}),
    eventLog: [],
    log: stored,
  };
}
