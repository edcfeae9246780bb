/**
 * Runs one planned scenario: streams the root agent, acts on events as the plan says
 * (approve, reject, ignore, cancel after the k-th event), answers "ask" approvals later
 * through handle.approvals, and records everything the invariants need. A per-case guard
 * turns a hang into a failure that carries the seed instead of a vitest timeout.
 */
import { Runner, UserError } from '../../src/index.js';
import type { PendingApproval, RunEvent, RunHandle } from '../../src/index.js';
import { Recorder, buildAgents } from './harness.js';
import { hasBudget, type Plan, type SlotPlan } from './scenario.js';

export type ApprovalEvent = Extract<RunEvent, { type: 'approval_required' }> & {
  readonly approvalId: string;
  reject(reason?: string): void;
};

export type Settled = { readonly ok: true; readonly value: { runId: string; output: string; transcript?: unknown } & Record<string, unknown> } | { readonly ok: false; readonly error: unknown };

export interface CaseRecord {
  readonly plan: Plan;
  readonly rec: Recorder;
  readonly events: RunEvent[];
  readonly rootRunId: string | undefined;
  readonly runIdOption: string | undefined;
  iterationError?: unknown;
  settled?: Settled;
  /** result() again after a late cancel (the run had ended): must not change. */
  settledAfterLateCancel?: Settled;
  /** The approval_required event seen for each slot `n`. */
  readonly approvalEvents: Map<number, ApprovalEvent>;
  pendingAtEnd: readonly PendingApproval[];
}

export const CASE_TIMEOUT_MS = Number(process.env.TROUPE_PROPERTY_CASE_TIMEOUT_MS ?? 4000);

let caseCounter = 0;

const settle = (promise: Promise<unknown>): Promise<Settled> =>
  promise.then(
    (value) => ({ ok: true, value: value as Extract<Settled, { ok: true }>['value'] }),
    (error: unknown) => ({ ok: false, error }),
  );

export async function runCase(plan: Plan): Promise<CaseRecord> {
  const s = plan.scenario;
  const rec = new Recorder();
  const root = buildAgents(plan, rec);
  const controller = new AbortController();
  const runIdOption = s.runIdOption ? `prop-${++caseCounter}` : undefined;
  const handle = Runner.stream(root, 'go', {
    ...(s.maxTurns !== undefined ? { maxTurns: s.maxTurns } : {}),
    ...(hasBudget(s)
      ? { budget: { ...(s.maxToolCalls !== undefined ? { maxToolCalls: s.maxToolCalls } : {}), ...(s.maxTotalTokens !== undefined ? { maxTotalTokens: s.maxTotalTokens } : {}) } }
      : {}),
    ...(s.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: s.approvalTimeoutMs } : {}),
    ...(s.cancel?.via === 'signal' ? { signal: controller.signal } : {}),
    ...(runIdOption ? { runId: runIdOption } : {}),
  }) as RunHandle;
  const record: CaseRecord = {
    plan,
    rec,
    events: [],
    rootRunId: undefined,
    runIdOption,
    approvalEvents: new Map(),
    pendingAtEnd: [],
  };

  const cancelNow = (reason: string) => {
    rec.cancelRequested = true;
    if (s.cancel?.via === 'signal') controller.abort(new Error(reason));
    else handle.cancel(reason);
  };
  let hangCancel = false;
  rec.cancelSoon = () => {
    if (hangCancel) return;
    hangCancel = true;
    rec.cancelRequested = true;
    setTimeout(() => cancelNow('hang'), 1);
  };
  const plannedCancel = () => {
    const mode = s.cancel?.mode ?? 'sync';
    rec.cancelRequested = true;
    if (mode === 'sync') cancelNow('stop');
    else if (mode === 'microtask') queueMicrotask(() => cancelNow('stop'));
    else setTimeout(() => cancelNow('stop'), 0);
  };
  rec.resolveLater = (slot) => resolveLater(handle, record, slot);

  const work = (async () => {
    if (s.cancel?.atEvent === -1) plannedCancel();
    let early: Promise<Settled> | undefined;
    let index = 0;
    try {
      for await (const event of handle) {
        record.events.push(event);
        if (index === 0) {
          (record as { rootRunId?: string }).rootRunId = event.runId;
          if (s.earlyResult) early = settle(handle.result());
        }
        if (event.type === 'approval_required') onApproval(handle, record, event as ApprovalEvent);
        if (s.cancel?.atEvent === index) plannedCancel();
        index++;
      }
    } catch (error) {
      record.iterationError = error;
    }
    record.settled = await settle(handle.result());
    if (early && !sameSettled(await early, record.settled)) {
      rec.violations.push(`result() called at the first event settled differently from result() at the end: ${describeSettled(await early)} vs ${describeSettled(record.settled)}`);
    }
    handle.cancel('late');
    record.settledAfterLateCancel = await settle(handle.result());
    record.pendingAtEnd = handle.approvals.pending();
  })();

  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), CASE_TIMEOUT_MS);
  });
  const outcome = await Promise.race([work.then(() => 'done' as const), guard]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    handle.cancel('case guard');
    const trace = record.events.map((e) => `${e.type}${'call' in e ? `:${e.call.id}` : ''}@${e.path.join('>')}`).slice(-40);
    throw new Error(
      `Case did not finish within ${CASE_TIMEOUT_MS} ms (a hang). Pending approvals: ${JSON.stringify(handle.approvals.pending().map((a) => a.approvalId))}. Last events:\n  ${trace.join('\n  ')}`,
    );
  }
  return record;
}

/** Same outcome: both resolved with the same output, or both rejected with the same error (instance or class). */
export function sameSettled(a: Settled, b: Settled): boolean {
  if (a.ok && b.ok) return a.value.output === b.value.output && a.value.runId === b.value.runId;
  if (!a.ok && !b.ok) return a.error === b.error || (a.error as object)?.constructor === (b.error as object)?.constructor;
  return false;
}

export function describeSettled(s: Settled | undefined): string {
  if (!s) return 'unsettled';
  if (s.ok) return `resolved(${JSON.stringify(s.value.output)})`;
  const e = s.error as Error;
  return `rejected(${e?.constructor?.name}: ${e?.message})`;
}

/** The consumer's decision, made before it pulls the next event. */
function onApproval(handle: RunHandle, record: CaseRecord, event: ApprovalEvent): void {
  const { rec, plan } = record;
  const n = (event.args as { n?: unknown } | undefined)?.n;
  const slot = typeof n === 'number' ? plan.byN.get(n) : undefined;
  if (!slot?.gate) {
    rec.violations.push(`approval_required for a call that is not gated: ${event.call.name} ${event.call.arguments}`);
    return;
  }
  if (record.approvalEvents.has(slot.n)) rec.violations.push(`second approval_required for call #${slot.n}`);
  record.approvalEvents.set(slot.n, event);
  const undecided = !rec.decisions.has(slot.n);
  const reason = `nope ${slot.n}`;
  const expectWaiting = undecided && !rec.cancelRequested && plan.scenario.approvalTimeoutMs === undefined;
  const handleDecision = (approved: boolean) => {
    const listed = handle.approvals.pending().some((a) => a.approvalId === event.approvalId);
    if (expectWaiting && !listed) rec.violations.push(`approvals.pending() lacks ${event.approvalId} while its event is held by the consumer`);
    const matched = approved ? handle.approvals.approve(event.approvalId) : handle.approvals.reject(event.approvalId, reason);
    if (matched) rec.decide(slot.n, { approved, by: 'handle', ...(approved ? {} : { reason }) });
    else if (expectWaiting) rec.violations.push(`approvals.${approved ? 'approve' : 'reject'}(${event.approvalId}) returned false while its event is held by the consumer`);
  };
  switch (slot.gate.consumer) {
    case 'evApprove':
      rec.decide(slot.n, { approved: true, by: 'consumer' });
      event.approve();
      return;
    case 'evReject':
      rec.decide(slot.n, { approved: false, by: 'consumer' });
      event.reject();
      return;
    case 'evRejectReason':
      rec.decide(slot.n, { approved: false, by: 'consumer', reason });
      event.reject(reason);
      return;
    case 'handleApprove':
      return handleDecision(true);
    case 'handleReject':
      return handleDecision(false);
    case 'ignore':
      return;
  }
}

/** After the handler answered "ask": decide the call later through handle.approvals, as planned. */
function resolveLater(handle: RunHandle, record: CaseRecord, slot: SlotPlan): void {
  const { rec, plan } = record;
  const gate = slot.gate!;
  // 'none' leaves the call to approvalTimeoutMs; without one nobody would decide it, so reject it then.
  const how = gate.resolver !== 'none' ? gate.resolver : plan.scenario.approvalTimeoutMs === undefined ? 'rejectById' : undefined;
  if (!how) return;
  const attempt = (tries: number): void => {
    const pending = handle.approvals.pending();
    checkPending(record, pending);
    const entry = pending.find((a) => (a.args as { n?: unknown } | undefined)?.n === slot.n);
    if (!entry) {
      // Not listed (yet, or any more: decided by a timeout or a cancel). Look again briefly.
      if (tries < 30 && !rec.decisions.has(slot.n)) setTimeout(() => attempt(tries + 1), 1);
      return;
    }
    const reason = `later ${slot.n}`;
    if (pending.length > 1) rec.note('decided while several calls waited');
    if (new Set(pending.map((a) => a.runId)).size > 1) rec.note('waiting in several runs');
    const record1 = (approved: boolean, matched: boolean, by: 'resolver' | 'release' = 'resolver') => {
      if (matched) rec.decide(slot.n, { approved, by, ...(approved ? {} : { reason }) });
      else rec.violations.push(`approvals.${approved ? 'approve' : 'reject'} did not match ${entry.approvalId}, which pending() had just listed`);
    };
    switch (how) {
      case 'approveById':
        return record1(true, handle.approvals.approve(entry.approvalId));
      case 'rejectById':
        return record1(false, handle.approvals.reject(entry.approvalId, reason));
      case 'approveByCallId':
      case 'rejectByCallId': {
        const approved = how === 'approveByCallId';
        const same = pending.filter((a) => a.callId === entry.callId);
        if (same.length === 1) return record1(approved, approved ? handle.approvals.approve(entry.callId) : handle.approvals.reject(entry.callId, reason));
        rec.note('ambiguous bare call id');
        try {
          if (approved) handle.approvals.approve(entry.callId);
          else handle.approvals.reject(entry.callId, reason);
          rec.violations.push(`approvals decision by the ambiguous call id '${entry.callId}' (waiting in ${same.length} places) did not throw`);
        } catch (error) {
          if (!(error instanceof UserError)) rec.violations.push(`ambiguous call id '${entry.callId}' threw ${String(error)}, not a UserError`);
          else if (!same.every((a) => (error as Error).message.includes(a.approvalId))) rec.violations.push(`ambiguous call id error does not list the candidates: ${(error as Error).message}`);
        }
        return record1(approved, approved ? handle.approvals.approve(entry.approvalId) : handle.approvals.reject(entry.approvalId, reason));
      }
      case 'approveByRunCall': {
        const same = pending.filter((a) => a.callId === entry.callId && a.runId === entry.runId);
        const target = same.length === 1 ? { runId: entry.runId, callId: entry.callId } : entry.approvalId;
        if (same.length === 1) rec.note('decided by { runId, callId }');
        return record1(true, handle.approvals.approve(target as never));
      }
      case 'releaseTrue':
      case 'releaseFalse': {
        const approved = how === 'releaseTrue';
        const count = handle.approvals.release(approved);
        if (count !== pending.length) rec.violations.push(`release(${approved}) returned ${count} with ${pending.length} calls pending`);
        for (const a of pending) {
          const n = (a.args as { n?: unknown } | undefined)?.n;
          if (typeof n === 'number') rec.decide(n, { approved, by: 'release' });
        }
        return;
      }
    }
  };
  setTimeout(() => attempt(0), gate.resolverDelayMs);
}

/** What pending() lists must be coherent: unique approval ids, each a gated call whose event matches. */
function checkPending(record: CaseRecord, pending: readonly PendingApproval[]): void {
  const { rec, plan } = record;
  const ids = new Set<string>();
  for (const a of pending) {
    if (ids.has(a.approvalId)) rec.violations.push(`pending() lists approvalId ${a.approvalId} twice`);
    ids.add(a.approvalId);
    const n = (a.args as { n?: unknown } | undefined)?.n;
    const slot = typeof n === 'number' ? plan.byN.get(n) : undefined;
    if (!slot) {
      rec.violations.push(`pending() lists a call of no gated slot: ${JSON.stringify(a)}`);
      continue;
    }
    if (a.tool !== slot.tool) rec.violations.push(`pending() entry ${a.approvalId}: tool ${a.tool}, expected ${slot.tool}`);
    if (slot.id !== '' && a.callId !== slot.id) rec.violations.push(`pending() entry ${a.approvalId}: callId ${a.callId}, expected ${slot.id}`);
    if (a.agent !== slot.agent) rec.violations.push(`pending() entry ${a.approvalId}: agent ${a.agent}, expected ${slot.agent}`);
    const event = record.approvalEvents.get(slot.n);
    if (event) {
      const same = event.approvalId === a.approvalId && event.runId === a.runId && event.call.id === a.callId && event.turn === a.turn && event.path.join('>') === a.path.join('>');
      if (!same) rec.violations.push(`pending() entry ${JSON.stringify({ ...a, args: undefined })} disagrees with its approval_required event ${JSON.stringify({ approvalId: event.approvalId, runId: event.runId, callId: event.call.id, turn: event.turn, path: event.path })}`);
    }
  }
}

