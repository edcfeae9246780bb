import type { Agent } from '../agent.js';
import { findAgent } from '../runtime/agent-graph.js';
import type { CheckpointStore, StoredRun } from '../store/checkpoint-store.js';
import { decideStored, pendingStoredApprovals } from '../runtime/decide.js';
import { runOfApproval } from '../runtime/approvals.js';
import { checkEditedArgs, type ApproveBody } from './approve-body.js';
import { HttpError } from './http.js';

/** What recovery needs of the server: its agents and a way to start a run resumed from the store. */
export interface RecoveryHost {
  readonly store: CheckpointStore;
  /** Registered agents by name (a factory is called once per use). */
  readonly agents: ReadonlyMap<string, Agent | (() => Agent)>;
  /** Starts a ServerRun that continues the stored run `runId` on `agent` (registered as `agentName`). */
  resume(runId: string, agentName: string, agent: Agent): void;
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

/**
 * On server start: every stored root run that was running (its process died) or is
 * suspended is resumed here (waiting for a dead owner's lease to run out). Sub-runs (`<parent>/<turn>.<index>`)
 * are resumed by their parent. Returns the ids it resumed.
 */
export async function recoverStoredRuns(host: RecoveryHost): Promise<string[]> {
  const { store } = host;
  if (!store.list) return [];
  const resumed: string[] = [];
  for (const summary of await store.list({ status: ['running', 'suspended'] })) {
    if (summary.runId.includes('/') || host.isLive(summary.runId)) continue;
    let saved: StoredRun | undefined;
    try {
      saved = await store.load(summary.runId);
    } catch {
      continue; // a damaged run stays as it is; GET /api/runs/:id reports it
    }
    // A lease still held (a process that just died, or another server) is waited for by the resumed run, up to its lease time.
    if (!saved) continue;
    const target = agentFor(host.agents, saved);
    if (!target) continue;
    host.resume(summary.runId, target.name, target.agent);
    resumed.push(summary.runId);
  }
  return resumed;
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
  if (saved.lease && saved.lease.expiresAt > Date.now()) {
    throw new HttpError(409, 'run_locked', `Run '${runId}' is held by '${saved.lease.owner}' until ${new Date(saved.lease.expiresAt).toISOString()}.`);
  }
  const target = agentFor(host.agents, saved);
  if (!target) throw new HttpError(409, 'agent_not_found', `No registered agent can continue run '${runId}' (its agent is '${saved.head.agent}').`);
  host.resume(runId, target.name, target.agent);
  return { status: 202, body: { runId, agent: target.name, status: 'running' } };
}

/**
 * POST /api/chat/approve for a call no live run here is waiting on: a stored run waiting for
 * that approval (suspended, or left by a process that died) gets the decision recorded in its
 * log (Runner.decide, with the edited `args` validated first) and is resumed, so only the
 * approved call runs, with the arguments approved. Undefined when the body names no such
 * stored approval (the caller then answers as for live runs).
 * @throws HttpError 400 `invalid_args` when edited args do not validate against the waiting tool.
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
  await decideStored(host.store, runId, request.approvalId, { approved: body.approve, ...(body.reason ? { reason: body.reason } : {}), ...(body.args ? { args: body.args } : {}), by: 'api' });
  // Not live here (checked above): continue it now.
  if (target) host.resume(root, target.name, target.agent);
  return { runId, approvalId: request.approvalId, callId: request.callId, decision: body.approve ? 'approve' : 'deny', resumed: target !== undefined };
}
