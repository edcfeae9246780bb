import type { Agent } from '../agent.js';
import { findAgent } from '../runtime/agent-graph.js';
import type { CheckpointStore, StoredRun } from '../store/checkpoint-store.js';
import { decideStored, pendingStoredApprovals } from '../runtime/decide.js';
import { runOfApproval } from '../runtime/approvals.js';
import { checkEditedArgs, type ApproveBody } from './approve-body.js';
import { RunLocked } from '../errors.js';
import { ownerProcessGone, ownerProcessState } from '../store/lease-owner.js';
import { HttpError } from './http.js';
import { hasStarted, leaseWaitOf, runLockedError, whenReady } from './run-readiness.js';
import type { ServerRun } from './runs.js';

/** What recovery needs of the server: its agents and a way to start a run resumed from the store. */
export interface RecoveryHost {
  readonly store: CheckpointStore;
  /** Registered agents by name (a factory is called once per use). */
  readonly agents: ReadonlyMap<string, Agent | (() => Agent)>;
  /**
   * Starts a ServerRun that continues the stored run `saved` (id `runId`) on `agent`
   * (registered as `agentName`); it shows the stored input, usage and, when known, first start.
   */
  resume(runId: string, agentName: string, agent: Agent, saved: StoredRun, startedAt?: number): ServerRun;
  /** Whether this server runs it right now. */
  isLive(runId: string): boolean;
}

function instance(source: Agent | (() => Agent)): Agent {
  return typeof source === 'function' ? source() : source;
}

/**
 * The registered agent a stored run continues on: the one named like the run's first reply's
 * agent, else any from which the stored head's agent is reachable through handoffs.
 */
export function agentFor(agents: RecoveryHost['agents'], saved: StoredRun): { name: string; agent: Agent } | undefined {
  const first = saved.entries.find((e) => e.kind === 'reply');
  const firstAgent = first && first.message.role === 'assistant' ? first.message.agent : saved.head.agent;
  const candidates = [...agents].map(([name, source]) => ({ name, agent: instance(source) }));
  const ordered = [...candidates.filter((c) => c.agent.name === firstAgent), ...candidates.filter((c) => c.agent.name !== firstAgent)];
  return ordered.find((c) => findAgent(c.agent, saved.head.agent) !== undefined);
}

/** How long server start waits for its resumed runs to reopen their approvals (a bound: a run that takes longer is still resumed). */
const RECOVERY_READY_MS = 10_000;

/**
 * On server start: every stored root run that was running (its process died) or is
 * suspended is resumed here, except one whose lease a live process of this machine holds
 * (it runs there; its approvals answer 409 `run_locked`). A dead owner's lease is taken over
 * at once; any other holder is waited for, up to the lease time (`lease_waiting`). Sub-runs
 * (`<parent>/<turn>.<index>`) are resumed by their parent. Resolves, with the ids it
 * resumed, once each resumed run has reopened its stored pending approvals (so they are
 * listed and decidable as soon as the server answers), waits for a lease, or ended.
 */
export async function recoverStoredRuns(host: RecoveryHost): Promise<string[]> {
  const { store } = host;
  if (!store.list) return [];
  const resumed: Array<{ runId: string; run: ServerRun; pending: readonly string[]; opened: Set<string>; stop: () => void }> = [];
  for (const summary of await store.list({ status: ['running', 'suspended'] })) {
    if (summary.runId.includes('/') || host.isLive(summary.runId)) continue;
    const { lease } = summary;
    if (lease && lease.expiresAt > Date.now() && ownerProcessState(lease.owner) === 'alive') continue;
    let saved: StoredRun | undefined;
    try {
      saved = await store.load(summary.runId);
    } catch {
      continue; // a damaged run stays as it is; GET /api/runs/:id reports it
    }
    if (!saved) continue;
    const target = agentFor(host.agents, saved);
    if (!target) continue;
    const pending = (await pendingStoredApprovals(store, summary.runId).catch(() => [])).map((request) => request.approvalId);
    const run = host.resume(summary.runId, target.name, target.agent, saved, summary.createdAt);
    // Remembered as they open: one an approval handler decides at once is never seen waiting.
    const opened = new Set<string>();
    const stop = run.handle.approvals.onOpened((approval) => opened.add(approval.approvalId));
    resumed.push({ runId: summary.runId, run, pending, opened, stop });
  }
  await Promise.all(
    resumed.map(({ run, pending, opened }) => whenReady(run, () => (pending.length > 0 ? pending.every((id) => opened.has(id) || isOpen(run, id)) : hasStarted(run)), RECOVERY_READY_MS)),
  );
  for (const { stop } of resumed) stop();
  return resumed.map(({ runId }) => runId);
}

function isOpen(run: ServerRun, approvalId: string): boolean {
  return run.pendingApprovals().some((approval) => approval.approvalId === approvalId);
}

/** POST /api/runs/:id/resume: continues a stored run that is not running here. */
export async function resumeRoute(host: RecoveryHost | undefined, runId: string): Promise<{ status: number; body: Record<string, unknown> }> {
  if (!host) throw new HttpError(404, 'no_store', 'This server has no checkpoint store; only stored runs can be resumed.');
  if (host.isLive(runId)) throw new HttpError(409, 'run_live', `Run '${runId}' is running on this server.`);
  let saved: StoredRun | undefined;
  try {
    saved = await host.store.load(runId);
  } catch (error) {
    throw new HttpError(409, 'run_damaged', `Run '${runId}' cannot be resumed: ${(error as Error).message}`);
  }
  if (!saved) throw new HttpError(404, 'run_not_found', `No stored run '${runId}'.`);
  // A dead owner's lease is taken over when the run claims it; any other holder's is not.
  if (saved.lease && saved.lease.expiresAt > Date.now() && !ownerProcessGone(saved.lease.owner)) throw runLockedError(runId, saved.lease);
  const target = agentFor(host.agents, saved);
  if (!target) throw new HttpError(409, 'agent_not_found', `No registered agent can continue run '${runId}' (its agent is '${saved.head.agent}').`);
  host.resume(runId, target.name, target.agent, saved);
  return { status: 202, body: { runId, agent: target.name, status: 'running' } };
}

/**
 * POST /api/chat/approve for a call no live run here is waiting on: a stored run waiting for
 * that approval (suspended, or left by a process that died) gets the decision recorded in its
 * log (Runner.decide, with the edited `args` validated first) and is resumed, so only the
 * approved call runs, with the arguments approved. A dead owner's lease is taken over first.
 * Undefined when the body names no such stored approval (the caller then answers as for live runs).
 * @throws HttpError 400 `invalid_args` when edited args do not validate against the waiting tool.
 * @throws HttpError 409 `run_locked` (naming the owner and the lease's expiry) when another live process holds the run.
 */
export async function decideStoredApproval(host: RecoveryHost | undefined, body: ApproveBody): Promise<Record<string, unknown> | undefined> {
  if (!host) return undefined;
  const approvalId = body.approvalId;
  const runId = approvalId !== undefined ? runOfApproval(approvalId) : body.runId;
  if (!runId || host.isLive(runId.split('/')[0]!)) return undefined;
  const pending = await pendingStoredApprovals(host.store, runId).catch(() => []);
  const request = pending.find((p) => (approvalId !== undefined ? p.approvalId === approvalId : p.callId === body.callId));
  if (!request) return undefined;
  const root = runId.split('/')[0]!;
  const rootSaved = await host.store.load(root);
  const target = rootSaved && agentFor(host.agents, rootSaved);
  if (body.args !== undefined && target) {
    const waiting = runId === root ? rootSaved : await host.store.load(runId);
    if (waiting) checkEditedArgs(target.agent, waiting.head.agent, request.tool, body.args);
  }
  try {
    await decideStored(host.store, runId, request.approvalId, { approved: body.approve, ...(body.reason ? { reason: body.reason } : {}), ...(body.args ? { args: body.args } : {}), by: 'api' });
  } catch (error) {
    // Held by a live process (or one on another machine): it exists, so never a 404.
    if (error instanceof RunLocked && error.owner !== undefined && error.expiresAt !== undefined) throw runLockedError(runId, { owner: error.owner, expiresAt: error.expiresAt });
    throw error;
  }
  // Not live here (checked above): continue it now.
  if (target && rootSaved) host.resume(root, target.name, target.agent, rootSaved);
  return { runId, approvalId: request.approvalId, callId: request.callId, decision: body.approve ? 'approve' : 'deny', resumed: target !== undefined };
}

/** How long the approve route waits for a live run of this server to reopen a stored approval. */
const APPROVAL_READY_MS = 10_000;

/**
 * POST /api/chat/approve for an approval no live run here lists yet, but which the stored log
 * of a live run of this server has pending: the run is still restoring (it reopens it in a
 * moment) or waits for another owner's lease. Resolves once the run lists it.
 * @throws HttpError 409 `run_locked` while the run waits for another owner's lease; `notFound`
 * when the approval is not pending in a live run's log, the run ended, or it did not reopen it in time.
 */
export async function awaitRestoredApproval(host: RecoveryHost | undefined, live: (runId: string) => ServerRun | undefined, body: ApproveBody, notFound: HttpError): Promise<void> {
  if (!host) throw notFound;
  const runId = body.approvalId !== undefined ? runOfApproval(body.approvalId) : body.runId;
  const run = runId ? live(runId.split('/')[0]!) : undefined;
  if (!runId || !run || run.finished) throw notFound;
  const pending = await pendingStoredApprovals(host.store, runId).catch(() => []);
  const request = pending.find((p) => (body.approvalId !== undefined ? p.approvalId === body.approvalId : p.callId === body.callId));
  if (!request) throw notFound;
  const readiness = await whenReady(run, () => isOpen(run, request.approvalId), APPROVAL_READY_MS);
  if (readiness === 'ready') return;
  const held = leaseWaitOf(run);
  if (readiness === 'lease_waiting' && held) throw runLockedError(run.id, held);
  throw notFound;
}
