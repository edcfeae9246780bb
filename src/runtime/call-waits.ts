/**
 * A call's own wait (its tool returned `waitForEvent`, `waitUntil`, or a question): the wait
 * machine's input as the run gives it, with the run's events and log; and, for a resumed run,
 * the wait a call was in when the run stopped.
 */
import type { WaitRequestEntry } from '../store/checkpoint-store.js';
import { waitKind } from '../waits/kinds/index.js';
import type { WaitInput } from '../waits/wait.machine.js';
import { WAIT_REQUEST, type WaitRequest, type WaitView } from '../waits/wait-types.js';
import { log } from './run-record.js';
import type { CallSlot, RunState } from './run-state.js';

/** The part of a dispatched call the wait names in its events (as the call was at dispatch). */
export interface WaitingCall {
  readonly runId: string;
  readonly path: readonly string[];
  readonly agentName: string;
  readonly turn: number;
  readonly call: CallSlot['call'];
}

/**
 * The input of the wait machine for `request`, the wait of `slot` (id `<runId>:<turn>.<index>`,
 * plus `:<askId>` for an ask from the tool's body).
 * A wait stored in the log (resume) keeps its request time and deadline, and a stored
 * resolution resolves it at once. Opening announces it (the kind's event), logs its request
 * once and tells the run (`wait.opened`: it may park now); ending reports and logs how it ended.
 */
export function callWaitInput(state: RunState, slot: CallSlot, call: WaitingCall, request: WaitRequest, askId?: string): WaitInput {
  const kind = waitKind(request.kind);
  // An ask from the tool's body (askFromTool) has its own id per ask: `<runId>:<turn>.<index>:ask.<n>`.
  const waitId = askId === undefined ? `${call.runId}:${slot.key}` : `${call.runId}:${slot.key}:${askId}`;
  const stored = state.storedWaits.get(waitId);
  const requestedAt = stored?.request.requestedAt ?? Date.now();
  const deadline = stored ? stored.request.deadline : request.until ?? (request.timeoutMs !== undefined ? requestedAt + request.timeoutMs : undefined);
  const view: WaitView = { waitId, kind: request.kind, runId: call.runId, callId: call.call.id, tool: call.call.name, path: call.path, agent: call.agentName, turn: call.turn, requestedAt, deadline, detail: request.detail };
  const base = { runId: call.runId, path: call.path, agent: call.agentName, turn: call.turn, call: call.call };
  const self = state.self;
  const waitKindName = request.kind;
  return {
    view,
    kind,
    router: state.waits,
    ...(stored?.resolution?.ended === 'resolved' ? { recorded: { resolution: stored.resolution.resolution, by: 'record' } } : {}),
    opened: (opened) => {
      const event = kind.openedEvent(opened, base);
      if (event) state.sink(event);
      if (state.runLog && !stored) {
        log(state, { kind: 'wait_request', waitId, waitKind: waitKindName, turn: call.turn, index: slot.index, callId: call.call.id, tool: call.call.name, detail: opened.detail, requestedAt, ...(deadline !== undefined ? { deadline } : {}) });
      }
      if (self.getSnapshot().status === 'active') self.send({ type: 'wait.opened' });
    },
    ended: (ended, outcome) => {
      const event = kind.resolvedEvent(ended, outcome, base);
      if (event) state.sink(event);
      if (!state.runLog || (stored?.resolution && outcome.ended === 'resolved' && outcome.by === 'record')) return;
      const resolved = outcome.ended === 'timedOut' ? { ended: 'timedOut' as const } : { ended: 'resolved' as const, resolution: outcome.resolution, by: outcome.by };
      log(state, { kind: 'wait_resolution', waitId, waitKind: waitKindName, callId: call.call.id, ...resolved, resolvedAt: Date.now() });
    },
  };
}

/** The wait a stored request describes, as the call opens it again when the run resumes. */
export function storedWaitRequest(entry: WaitRequestEntry): WaitRequest {
  return {
    [WAIT_REQUEST]: true,
    kind: entry.waitKind,
    detail: entry.detail,
    ...(entry.waitKind === 'timer' && entry.deadline !== undefined ? { until: entry.deadline } : entry.deadline !== undefined ? { timeoutMs: entry.deadline - entry.requestedAt } : {}),
  };
}
