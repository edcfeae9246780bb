/**
 * The current call's approval step, as the run chart's actions apply it: the approval wait's
 * input (a wait machine of kind approval), its request and decision in the log, and what an
 * approved, denied or edited call becomes.
 */
import { approvalNeeded, handlerVerdict } from '../rules/approval.js';
import type { ApprovalDecisionEntry, ApprovalRequestEntry } from '../store/checkpoint-store.js';
import { isObject } from '../tools/schema.js';
import { validateArguments } from '../tools/validate.js';
import { approvalKind, type ApprovalResolution } from '../waits/kinds/approval.js';
import type { ConsultVerdict, WaitCheck, WaitInput } from '../waits/wait.machine.js';
import type { WaitOutcome, WaitView } from '../waits/wait-types.js';
import { editedArguments, type ApprovalOutcome, type DecidedBy } from './approvals.js';
import { hashArguments } from './args-hash.js';
import { eventBase } from './event-base.js';
import { claimHandoff, contextFor, currentSlot, dispatch, flushDispatches, reject } from './run-calls.js';
import { blockReason, hasHook, hookContext } from './run-hooks.js';
import { parksForWaits } from './run-park.js';
import { log } from './run-record.js';
import type { CallSlot, RunState } from './run-state.js';

/** Decisions worth keeping across a restart: a person's, the handler's, a timeout. (A cancel or a park withdraws the wait; it decides nothing.) */
const LOGGED_DECIDERS = new Set<string>(['consumer', 'handler', 'timeout']);

/**
 * The approval wait of the current call (the `approval` child of approvalWait). Order of
 * authority: beforeToolCall hooks and the needsApproval predicate (check), a decision stored
 * for exactly these arguments (recorded), then the stream consumer (ev.approve/reject,
 * handle.approvals) and the agent's approvalHandler once the consumer has passed it; fails
 * closed on a throwing predicate, hook or handler, on its timeout, and when an "ask" can no
 * longer be answered.
 */
export function approvalInput(state: RunState): WaitInput {
  const slot = currentSlot(state);
  const base = eventBase(state);
  const turn = state.turn;
  const approvalId = `${state.runId}:${slot.key}`;
  const stored = storedApproval(state, slot);
  const self = state.self;
  const requestedAt = stored.request?.requestedAt ?? Date.now();
  const timeoutMs = state.options.approvalTimeoutMs;
  // A logged deadline stands (the process that asked set it; the parked run was woken for it).
  const deadline = stored.request?.deadline ?? (timeoutMs === undefined || !Number.isFinite(timeoutMs) ? undefined : requestedAt + timeoutMs);
  const view: WaitView = {
    waitId: approvalId,
    kind: 'approval',
    runId: state.runId,
    callId: slot.call.id,
    tool: slot.call.name,
    path: base.path,
    agent: base.agent,
    turn,
    requestedAt,
    // A durable wait's timeout counts from its stored request time, across restarts.
    deadline,
    detail: { tool: slot.call.name, args: slot.args },
  };
  const reportFailure = (error: Error): void => state.sink({ type: 'tool_call_failed', ...base, turn, call: slot.call, error, attempt: 0, willRetry: false });
  const needsCheck = typeof slot.tool!.needsApproval === 'function' || hasHook(state.hookSet, 'beforeToolCall');
  return {
    view,
    kind: approvalKind,
    router: state.waits,
    ...(stored.decision ? { recorded: { resolution: recordedDecision(stored.decision), by: 'record' } } : {}),
    ...(needsCheck ? { check: () => checkApproval(state, slot, reportFailure) } : {}),
    consult: () => consultHandler(state, slot),
    parks: () => parksForWaits(state),
    // Announced, the request logged once (a resumed run's stored one stands), then the run is told: it may park now.
    opened: (opened) => {
      state.sink({
        type: 'approval_required',
        ...base,
        turn,
        approvalId,
        call: slot.call,
        ...(slot.call !== slot.asked ? { requested: slot.asked } : {}),
        args: slot.args,
        approve: (edits?: { args: unknown }) => void state.waits.resolve(approvalId, { approved: true, ...(edits !== undefined ? { edits: editedArguments(edits) } : {}) }),
        reject: (reason?: string) => void state.waits.resolve(approvalId, { approved: false, ...(reason !== undefined ? { reason } : {}) }),
      });
      if (state.runLog && !stored.request) {
        log(state, { kind: 'approval_request', turn, index: slot.index, callId: slot.call.id, approvalId, tool: slot.call.name, argsHash: hashArguments(slot.call.arguments), requestedAt: opened.requestedAt, ...(opened.deadline !== undefined ? { deadline: opened.deadline } : {}) });
      }
      if (self.getSnapshot().status === 'active') self.send({ type: 'wait.opened' });
    },
    // The chart's recordDecision logs the decision (the wait's done event).
    ended: () => undefined,
    reportFailure,
  };
}

/** beforeToolCall hooks (a block ends it, denied), then the needsApproval predicate (falsy: approved without asking). Never rejects. */
async function checkApproval(state: RunState, slot: CallSlot, reportFailure: (error: Error) => void): Promise<WaitCheck> {
  if (hasHook(state.hookSet, 'beforeToolCall')) {
    try {
      const blockedBy = await blockReason(state.hookSet, { call: slot.call, tool: slot.tool!, args: slot.args }, hookContext(state));
      if (blockedBy !== undefined) return { open: false, resolution: { approved: false, blockedBy }, by: 'hook' };
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      reportFailure(failure);
      return { open: false, resolution: { approved: false, hookFailure: `beforeToolCall hook failed: ${failure.message || failure.name}` }, by: 'error' };
    }
  }
  const needsApproval = slot.tool!.needsApproval;
  if (typeof needsApproval !== 'function') return needsApproval === false ? { open: false, resolution: { approved: true }, by: 'policy' } : { open: true };
  try {
    const needed = approvalNeeded(await needsApproval(slot.args, contextFor(state, slot)));
    return needed ? { open: true } : { open: false, resolution: { approved: true }, by: 'policy' };
  } catch (error) {
    reportFailure(error instanceof Error ? error : new Error(String(error)));
    return { open: false, resolution: { approved: false }, by: 'error' };
  }
}

/**
 * The agent's approvalHandler, once the consumer passed the wait or left: its verdict. Without a
 * handler a parking run keeps waiting (the decision comes from another process), any other denies.
 * Rejects with what the handler threw.
 */
async function consultHandler(state: RunState, slot: CallSlot): Promise<ConsultVerdict> {
  const handler = state.agent.approvalHandler;
  if (!handler) return parksForWaits(state) ? 'ask' : 'deny';
  const base = eventBase(state);
  return handlerVerdict(await handler({ call: slot.call, args: slot.args, agent: base.agent, path: base.path }, contextFor(state, slot)));
}

/** How the approval wait ended, as the chart's guards and actions read it. */
export function approvalOutcome(outcome: WaitOutcome): ApprovalOutcome {
  if (outcome.ended === 'timedOut') return { approved: false, by: 'timeout' };
  const resolution = outcome.resolution as ApprovalResolution & { readonly blockedBy?: string; readonly hookFailure?: string };
  return {
    approved: resolution.approved,
    by: outcome.by as DecidedBy,
    ...(resolution.reason !== undefined ? { reason: resolution.reason } : {}),
    ...(resolution.approved && resolution.edits ? { edits: resolution.edits } : {}),
    ...(resolution.blockedBy !== undefined ? { blockedBy: resolution.blockedBy } : {}),
    ...(resolution.hookFailure !== undefined ? { hookFailure: resolution.hookFailure } : {}),
  };
}

/**
 * The stored request of the current call's approval and its decision (a resumed run), bound to
 * the exact arguments: a request or decision made for other arguments is not this call's.
 */
function storedApproval(state: RunState, slot: CallSlot): { request?: ApprovalRequestEntry; decision?: ApprovalDecisionEntry } {
  if (!state.runLog) return {};
  const stored = state.storedApprovals.get(`${state.runId}:${slot.key}`);
  const argsHash = hashArguments(slot.call.arguments);
  if (!stored || stored.request.argsHash !== argsHash) return {};
  return stored.decision?.argsHash === argsHash ? { request: stored.request, decision: stored.decision } : { request: stored.request };
}

/** A stored decision as the approval wait applies it; edits only when their text still has the hash they were stored with (restore checks this too). */
function recordedDecision(decision: ApprovalDecisionEntry): ApprovalResolution {
  return {
    approved: decision.approved,
    ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
    ...(decision.editedArguments !== undefined ? { edits: { arguments: decision.editedArguments } } : {}),
  };
}

/**
 * The current call's approval wait ended with `outcome`: a decision worth keeping across a
 * restart (a person's, the handler's, a timeout) is logged, with the edited arguments it approved.
 */
export function recordDecision(state: RunState, outcome: ApprovalOutcome): void {
  if (!state.runLog || !LOGGED_DECIDERS.has(outcome.by)) return;
  const slot = currentSlot(state);
  const approvalId = `${state.runId}:${slot.key}`;
  // Edited arguments are part of the decision: a resumed run runs exactly these (their hash guards the text).
  const edits = outcome.approved && outcome.edits ? { editedArguments: outcome.edits.arguments, editedArgsHash: hashArguments(outcome.edits.arguments) } : {};
  log(state, {
    kind: 'approval_decision',
    approvalId,
    callId: slot.call.id,
    argsHash: hashArguments(slot.call.arguments),
    approved: outcome.approved,
    ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}),
    ...edits,
    by: outcome.by,
    decidedAt: Date.now(),
  });
}

/** A denied call gets its error result (the reason, when one was given, is what the model reads). */
export function rejectDenied(state: RunState, outcome: ApprovalOutcome): void {
  const slot = currentSlot(state);
  state.batch.cursor++;
  if (outcome.blockedBy !== undefined) return reject(state, slot, `Tool error: blocked: ${outcome.blockedBy}`, outcome.blockedBy);
  if (outcome.hookFailure !== undefined) return reject(state, slot, `Tool error: ${outcome.hookFailure}`);
  const reason = outcome.reason ? `: ${outcome.reason}` : '.';
  reject(state, slot, `Tool error: approval denied for tool '${slot.call.name}'${reason}`);
}

/**
 * The approver's edited arguments, if any, as a cleared call's new raw and validated args; a
 * string when they are invalid. The edits are JSON text, parsed, checked and validated the way
 * the model's arguments are, so a live run and a resumed one run the same value.
 */
export function editedArgs(state: RunState, outcome: ApprovalOutcome): { raw: Record<string, unknown>; args: unknown } | string | undefined {
  if (!outcome.edits) return undefined;
  const slot = currentSlot(state);
  let raw: unknown;
  try {
    raw = JSON.parse(outcome.edits.arguments);
  } catch {
    return `edited arguments for tool '${slot.call.name}' are not valid JSON`;
  }
  if (!isObject(raw)) return `edited arguments for tool '${slot.call.name}' must be a JSON object`;
  try {
    return { raw, args: validateArguments(slot.tool!, raw) };
  } catch (error) {
    return `edited arguments for tool '${slot.call.name}' are invalid: ${(error as Error).message}`;
  }
}

/** Approved with edited arguments: the call will run with them. */
export function applyEdits(state: RunState, outcome: ApprovalOutcome): void {
  const edited = editedArgs(state, outcome);
  if (!edited || typeof edited === 'string') return;
  const slot = currentSlot(state);
  slot.raw = edited.raw;
  slot.args = edited.args;
}

/** Approved with invalid edits: the call gets an error result and never runs. */
export function rejectInvalidEdits(state: RunState, outcome: ApprovalOutcome): void {
  const slot = currentSlot(state);
  const problem = String(editedArgs(state, outcome));
  state.batch.cursor++;
  reject(state, slot, `Tool error: ${problem}`);
}

/** An approved call that may run in parallel: dispatch it now. */
export function dispatchApproved(state: RunState): void {
  const slot = currentSlot(state);
  claimHandoff(state.batch, slot);
  state.batch.cursor++;
  dispatch(state, slot);
  flushDispatches(state);
}

/** An approved call with no free slot (maxConcurrentToolCalls): it waits, cleared, for one. */
export function holdApproved(state: RunState): void {
  currentSlot(state).state = 'cleared';
}

/** An approved call that must run alone: it claims its handoff now and waits at the barrier. */
export function claimApproved(state: RunState): void {
  claimHandoff(state.batch, currentSlot(state));
}
