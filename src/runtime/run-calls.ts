import type { Agent } from '../agent.js';
import type { Tool } from '../tools/tool.js';
import type { CallJob, CallOutcome } from '../actors/call-pipeline.js';
import type { SettledCallResult } from '../actors/tool-executor.js';
import { startToolCalls, startToolExecutor } from '../actors/tool-executor.js';
import { BudgetExceeded, RunCancelled } from '../errors.js';
import { ancestorOverBudget, durationOverBudget, toolCallsOverBudget } from '../rules/budget.js';
import { callVerdict, type ClearedCall } from '../rules/preflight.js';
import { hasCapacity } from '../rules/batch.js';
import { hasHook, hookContext, reshapeResult } from './run-hooks.js';
import { CallContext } from '../tools/call-context.js';
import type { Message, ToolCallCompletedEvent, ToolCallRequest } from '../types.js';
import { log } from './run-record.js';
import { callWaitInput, storedWaitRequest } from './call-waits.js';
import type { WaitInput } from '../waits/wait.machine.js';
import type { WaitRequest } from '../waits/wait-types.js';
import { countToolCall } from './run-spend.js';
import { runPort } from './run-port.js';
import type { Batch, CallSlot, RunState } from './run-state.js';

/** Where preflight stopped (it raises one of these after each pass; the chart decides where the run goes). */
export type PreflightVerdictEvent = { readonly type: 'preflight.done' | 'preflight.approval' | 'preflight.alone' | 'preflight.stop' | 'preflight.full' };

/**
 * Serial preflight in request order, from the cursor: each call is counted against the
 * budget, then judged by the pure rule `callVerdict`. Rejected calls get their error result,
 * cleared parallel calls are dispatched (handed to the executor in one message per pass).
 * Stops at a call that needs a state of its own and returns the verdict event for the chart.
 */
export function admitCalls(state: RunState): PreflightVerdictEvent['type'] {
  const batch = state.batch;
  try {
    while (batch.cursor < batch.slots.length) {
      if (state.stopError) return 'preflight.stop';
      const slot = batch.slots[batch.cursor]!;
      if (slot.state === 'settled') {
        // Resumed turn: this call's result was stored before the crash.
        batch.cursor++;
        continue;
      }
      if (slot.state === 'cleared') {
        // Cleared before and held for a free slot: it is not counted or judged again.
        if (!hasCapacity(state.inFlight, state.options.maxConcurrentToolCalls)) return 'preflight.full';
        batch.cursor++;
        dispatch(state, slot);
        continue;
      }
      countToolCall(state);
      const verdict = callVerdict({
        call: slot.call,
        tools: state.tools,
        claimedHandoff: batch.claimedHandoff,
        sequentialBatch: batch.sequential,
        overBudget: callOverBudget(state, Date.now()),
        hooked: hasHook(state.hookSet, 'beforeToolCall'),
        cutOff: state.lastReply?.finishReason === 'length',
        resolved: slot.call !== slot.asked,
      });
      switch (verdict.kind) {
        case 'overBudget':
          state.stopError = verdict.error;
          batch.cursor++;
          reject(state, slot, `Tool error: ${verdict.error.message}`);
          return 'preflight.stop';
        case 'reject':
          batch.cursor++;
          reject(state, slot, verdict.output);
          continue;
        case 'approval':
          clear(slot, verdict.cleared);
          return 'preflight.approval';
        case 'alone':
          clear(slot, verdict.cleared);
          claimHandoff(batch, slot);
          return 'preflight.alone';
        case 'dispatch':
          clear(slot, verdict.cleared);
          claimHandoff(batch, slot);
          if (!hasCapacity(state.inFlight, state.options.maxConcurrentToolCalls)) {
            slot.state = 'cleared';
            return 'preflight.full';
          }
          batch.cursor++;
          dispatch(state, slot);
          continue;
      }
    }
    return 'preflight.done';
  } finally {
    flushDispatches(state);
  }
}

/** Budgets checked per call after it was counted: the run's own count and duration, then every ancestor's remainder. */
function callOverBudget(state: RunState, now: number): BudgetExceeded | undefined {
  return toolCallsOverBudget(state.budget, state.toolCallCount) ?? durationOverBudget(state.budget, now - state.startedAt) ?? ancestorOverBudget(state.ancestors, now);
}

function clear(slot: CallSlot, cleared: ClearedCall): void {
  slot.tool = cleared.tool;
  slot.raw = cleared.raw;
  slot.args = cleared.args;
}

/** The first handoff a turn lets through claims it; later ones are rejected by preflight. */
export function claimHandoff(batch: Batch, slot: CallSlot): void {
  if (slot.tool!.handoff) batch.claimedHandoff = slot.tool!.handoff.targetName;
}

/** The call preflight stopped at (waiting for an approval or for the barrier). */
export function currentSlot(state: RunState): CallSlot {
  return state.batch.slots[state.batch.cursor]!;
}

/** The barrier call, once nothing else is in flight. */
export function dispatchAlone(state: RunState): void {
  const slot = state.batch.slots[state.batch.cursor++]!;
  dispatch(state, slot);
  flushDispatches(state);
}

export function dispatch(state: RunState, slot: CallSlot): void {
  slot.state = 'dispatched';
  state.inFlight++;
  const tool = slot.tool!;
  const agent = state.agent;
  const job = new DispatchedCall(state, slot, tool, agent, contextFor(state, slot));
  if (!state.audience.quiet) {
    state.sink(
      slot.call === slot.asked
        ? { type: 'tool_call_started', runId: job.runId, path: job.path, agent: job.agentName, turn: job.turn, call: job.call }
        : { type: 'tool_call_started', runId: job.runId, path: job.path, agent: job.agentName, turn: job.turn, call: job.call, requested: slot.asked },
    );
  }
  state.outbox.push(job);
}

/**
 * One dispatched call's job. A class, so reporting a failed attempt is one method for every
 * call instead of a closure (and its scope) kept per call while it runs.
 */
class DispatchedCall implements CallJob {
  readonly raw: Record<string, unknown>;
  readonly validated: unknown;
  readonly retries: number;
  readonly timeoutMs: number | undefined;
  readonly maxOutputChars: number | null;
  readonly agentRenderer: CallJob['agentRenderer'];
  readonly reshape: CallJob['reshape'];
  readonly runId: string;
  readonly path: readonly string[];
  readonly agentName: string;
  readonly turn: number;
  readonly call: CallSlot['call'];
  /** The wait this call was in when its run stopped (resume): it opens again; the tool does not run again. */
  readonly resumedWait: WaitRequest | undefined;
  readonly #sink: RunState['sink'];
  readonly #state: RunState;
  readonly #slot: CallSlot;

  constructor(
    state: RunState,
    slot: CallSlot,
    readonly tool: Tool,
    agent: Agent,
    readonly ctx: CallContext,
  ) {
    this.raw = slot.raw!;
    this.validated = slot.args;
    this.retries = tool.retries ?? agent.defaultToolRetries;
    this.timeoutMs = tool.timeoutMs ?? agent.defaultToolTimeoutMs;
    this.maxOutputChars = tool.maxOutputChars === undefined ? agent.maxToolOutputChars : tool.maxOutputChars;
    this.agentRenderer = agent.toolResultRenderer;
    this.reshape = hasHook(state.hookSet, 'afterToolCall') ? afterToolCallFor(state, slot) : undefined;
    // What the events of this call name: the run, agent and turn as they are at dispatch.
    this.runId = state.runId;
    this.path = state.path;
    this.agentName = agent.name;
    this.turn = state.turn;
    this.call = slot.call;
    this.#sink = state.sink;
    this.#state = state;
    this.#slot = slot;
    const stored = state.storedWaits.size > 0 ? state.storedWaits.get(`${state.runId}:${slot.key}`) : undefined;
    this.resumedWait = stored ? storedWaitRequest(stored.request) : undefined;
  }

  openWait(request: WaitRequest, askId?: string): WaitInput {
    return callWaitInput(this.#state, this.#slot, this, request, askId);
  }

  onAttemptFailed(error: Error, attempt: number, willRetry: boolean): void {
    this.#sink({ type: 'tool_call_failed', runId: this.runId, path: this.path, agent: this.agentName, turn: this.turn, call: this.call, error, attempt, willRetry });
  }
}

/** Hands the calls cleared since the last flush to the run's executor in one message (the executor is made with the run's first call). */
export function flushDispatches(state: RunState): void {
  if (state.outbox.length === 0) return;
  const jobs = state.outbox;
  state.outbox = [];
  startToolCalls((state.executor ??= startToolExecutor(state.self)), jobs);
}

/** afterToolCall hooks on a call's outcome; a throwing hook makes it an error result. Never rejects. */
function afterToolCallFor(state: RunState, slot: CallSlot): (outcome: CallOutcome) => Promise<CallOutcome> {
  const call = { call: slot.call, tool: slot.tool!, args: slot.args };
  return async (outcome) => {
    try {
      const shaped = await reshapeResult(state.hookSet, call, { output: outcome.output, isError: outcome.isError, result: outcome.result }, hookContext(state));
      // A hook that changes the text replaces the result: its parts are dropped.
      return shaped.output === outcome.output && shaped.isError === outcome.isError ? outcome : { ...outcome, output: shaped.output, isError: shaped.isError, terminate: outcome.terminate && !shaped.isError, parts: undefined };
    } catch (error) {
      return { ...outcome, result: undefined, output: `Tool error: afterToolCall hook failed: ${(error as Error)?.message ?? String(error)}`, isError: true, terminate: false };
    }
  };
}

export function contextFor(state: RunState, slot: CallSlot): CallContext {
  return new CallContext(runPort(state), slot.call.id, state.turn, slot.key);
}

/** Records each outcome the executor handed over, in completion order; every call keeps only its first result. */
export function recordResults(state: RunState, results: readonly SettledCallResult[]): void {
  for (const { key, outcome } of results) settle(state, key, outcome);
}

/**
 * Whether recording these results leaves no call in flight (pure): each dispatched call has
 * its outcome here. Results for calls that are not in flight (already closed) do not count.
 */
export function settlesAllInFlight(state: RunState, results: readonly SettledCallResult[]): boolean {
  if (results.length < state.inFlight) return false;
  const seen = results.length > 1 ? new Set<string>() : undefined;
  let settling = 0;
  for (const { key } of results) {
    if (state.batch.byKey.get(key)?.state !== 'dispatched' || seen?.has(key)) continue;
    seen?.add(key);
    settling++;
  }
  return settling === state.inFlight;
}

/** The RunCancelled a tool raised (it cancels the whole run tree), if any of these outcomes carries one. */
export function cancelFromResults(results: readonly SettledCallResult[]): RunCancelled | undefined {
  for (const { outcome } of results) if (outcome.runSignal instanceof RunCancelled) return outcome.runSignal;
  return undefined;
}

function settle(state: RunState, key: string, outcome: CallOutcome): void {
  const slot = state.batch.byKey.get(key);
  if (!slot || slot.state === 'settled') return;
  if (slot.state === 'dispatched') state.inFlight--;
  slot.state = 'settled';
  slot.terminate = outcome.terminate;
  slot.output = outcome.output;
  // The result answers the call as the model asked it (a resolved call's result names the model's tool; the log says which tool ran).
  const message: Message =
    outcome.parts === undefined
      ? { role: 'tool', callId: slot.asked.id, name: slot.asked.name, content: outcome.output, isError: outcome.isError }
      : { role: 'tool', callId: slot.asked.id, name: slot.asked.name, content: outcome.output, isError: outcome.isError, parts: outcome.parts };
  const resolved = slot.call === slot.asked ? undefined : { name: slot.call.name, arguments: slot.call.arguments };
  state.transcript.push(message);
  if (!state.audience.quiet) {
    const completed: ToolCallCompletedEvent = {
      type: 'tool_call_completed',
      runId: state.runId,
      path: state.path,
      agent: state.agent.name,
      turn: state.turn,
      call: slot.call,
      result: outcome.result,
      output: outcome.output,
      isError: outcome.isError,
      details: outcome.details,
      terminate: outcome.terminate,
    };
    if (outcome.blockedBy !== undefined) (completed as { blockedBy?: string }).blockedBy = outcome.blockedBy;
    if (outcome.parts !== undefined) (completed as { parts?: CallOutcome['parts'] }).parts = outcome.parts;
    if (resolved) (completed as { requested?: ToolCallRequest }).requested = slot.asked;
    state.sink(completed);
  }
  // Without a log the entry is not even built (the per-call path).
  if (state.runLog) {
    const entry = outcome.terminate ? { kind: 'result' as const, turn: state.turn, message, terminate: true } : { kind: 'result' as const, turn: state.turn, message };
    log(state, resolved ? { ...entry, resolved } : entry);
  }
  if (outcome.runSignal instanceof BudgetExceeded) state.stopError ??= outcome.runSignal;
}

export function reject(state: RunState, slot: CallSlot, output: string, blockedBy?: string): void {
  settle(state, slot.key, { result: undefined, output, isError: true, details: undefined, terminate: false, ...(blockedBy !== undefined ? { blockedBy } : {}) });
}

/** Synthetic results for calls that will never run; `includeRunning` also closes in-flight calls. */
export function closeOpenCalls(state: RunState, output: string, includeRunning: boolean): void {
  for (const slot of state.batch.slots) {
    if (slot.state === 'pending' || slot.state === 'cleared' || (includeRunning && slot.state === 'dispatched')) reject(state, slot, output);
  }
  state.batch.cursor = state.batch.slots.length;
}
