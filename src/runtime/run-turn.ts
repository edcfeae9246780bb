import { streamModelTurn, type ModelReply, type ModelTurnInput } from '../actors/model-turn.js';
import { asError } from '../errors.js';
import { isSequentialBatch } from '../rules/batch.js';
import type { AssistantMessage, CustomMessage, UserMessage } from '../types.js';
import { normaliseInput } from './run-options.js';
import { takeCount } from '../rules/batch.js';
import { onlyFollowUpsWait } from './run-end.js';
import { log } from './run-record.js';
import { checkGuardrails, hasHook, hookContext, judgeReply, viewShaper } from './run-hooks.js';
import { z } from 'zod';
import { RunModelInput } from './run-model-input.js';
import { spendOnReply, spendOwn } from './run-spend.js';
import { emptyBatch, useAgent, type Batch, type CallSlot, type HandoffInputFilter, type QueuedMessage, type RunState } from './run-state.js';
import type { Agent } from '../agent.js';
import { contextCompactor } from './run-context-view.js';
import { inNextMicrotask } from './microtask.js';

/** `run_started`; a fresh run logs its input, a resumed one re-opens its stored turn. Sub-runs announce themselves to their parent. */
export function startRun(state: RunState): void {
  state.parentRef?.send({ type: 'child.started', runId: state.runId, ref: state.self });
  state.sink({ type: 'run_started', runId: state.runId, path: state.path, agent: state.agent.name, input: state.input });
  if (state.resumed) {
    if (state.resumeInTurn) state.sink({ type: 'turn_started', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn });
    return;
  }
  if (state.configError) return;
  for (const message of normaliseInput(state.input).messages) {
    state.transcript.push(message);
    if (state.runLog) log(state, { kind: 'input', message });
  }
}

/**
 * A new turn. Before the model request, waiting messages join the transcript (each logged
 * and announced as user_message_injected): every mailbox post, the queued steer messages
 * (all, or one with steeringMode "one-at-a-time"), and — only when the turn before would
 * have ended the run — the queued follow-ups (likewise).
 */
export function startTurn(state: RunState): void {
  const followUpsDue = onlyFollowUpsWait(state);
  state.turn++;
  state.turnSaved = false;
  state.batch = emptyBatch();
  if (!state.audience.quiet) state.sink({ type: 'turn_started', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn });
  if (state.turn === 1 && !state.resumed && state.hookSet.inputGuardrails.length > 0) startInputCheck(state);
  if (state.inbox.length > 0) for (const { text, source } of state.inbox.splice(0)) inject(state, text, source, undefined);
  const mode = state.options.steeringMode;
  if (state.steerQueue.length > 0) for (const queued of state.steerQueue.splice(0, takeCount(state.steerQueue.length, mode))) inject(state, queued.message ?? queued.text, 'steer', queued.id);
  if (followUpsDue) for (const queued of state.followUps.splice(0, takeCount(state.followUps.length, mode))) inject(state, queued.message ?? queued.text, 'follow_up', queued.id);
}

/**
 * Input guardrails run beside the whole first turn (its model call and tools). Their verdict
 * comes back as a message: `guardrail.tripped` ends the run from any state, with every open
 * call closed; the run cannot complete before `guardrail.passed` (turn.ending waits).
 */
function startInputCheck(state: RunState): void {
  const self = state.self;
  const tell = (event: { type: string; [key: string]: unknown }): void => {
    if (self.getSnapshot().status === 'active') self.send(event);
  };
  const check = checkGuardrails('input', state.hookSet.inputGuardrails, state.transcript.slice(), hookContext(state));
  state.inputCheck = check.then(
    () => tell({ type: 'guardrail.passed' }),
    (error: unknown) => {
      tell({ type: 'guardrail.tripped', error });
      throw error;
    },
  );
  state.inputCheck.catch(() => undefined);
}

function inject(state: RunState, text: string | CustomMessage, source: 'steer' | 'follow_up' | 'mailbox' | 'hook' | 'repair', id: string | undefined): void {
  const message: UserMessage | CustomMessage = typeof text === 'string' ? { role: 'user', content: text } : text;
  state.transcript.push(message);
  log(state, { kind: 'input', message, source, ...(id !== undefined ? { id } : {}) });
  state.sink({ type: 'user_message_injected', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, message, source, ...(id !== undefined ? { id } : {}) });
}

/** `steer.add`: a caller's message for the model's next request (`queue: 'steer'`) or for when the run would end (`'follow_up'`). */
export function queueSteer(state: RunState, queue: 'steer' | 'follow_up', message: QueuedMessage): void {
  (queue === 'steer' ? state.steerQueue : state.followUps).push(message);
}

/** `steer.remove`: withdraws a queued message that has not been read yet. */
export function withdrawSteer(state: RunState, id: string): void {
  state.steerQueue = state.steerQueue.filter((m) => m.id !== id);
  state.followUps = state.followUps.filter((m) => m.id !== id);
}

/** What one model turn reports back to the run (`requestModel` started it). */
export type ModelAnswerEvent =
  /** `output`: the reply. */
  | { readonly type: 'model.replied'; readonly output: ModelReply }
  /** The stream or a model-side hook failed (ModelError, HookError or what the model threw). */
  | { readonly type: 'model.failed'; readonly error: unknown };

/**
 * Entering `turn.model`: the turn's model request starts (contextPolicy view, beforeModelCall,
 * the stream, afterModelResponse; streamModelTurn) and reports back to the run as
 * `model.replied` or `model.failed`. Every way out of `turn.model` other than that answer ends
 * the run, which aborts the run's signal (so the stream stops) and no longer listens: a late
 * answer is dropped. The request is built when the stream starts, after this step's entry
 * actions, so it sees every message the turn injected.
 */
export function requestModel(state: RunState): void {
  const self = state.self;
  const answer = (event: ModelAnswerEvent): void => {
    if (self.getSnapshot().status === 'active') self.send(event);
  };
  const input = modelInput(state);
  // The model's code starts after this statechart step: it never runs inside a run's action.
  inNextMicrotask(() =>
    streamModelTurn(input, state.abortController).then(
      (output) => answer({ type: 'model.replied', output }),
      (error: unknown) => answer({ type: 'model.failed', error }),
    ),
  );
}

/**
 * What the model turn needs for this turn's request (RunModelInput). Its methods read the
 * state when called, so for an agent without hooks in a run without a checkpoint log (no per-turn
 * `logged` wait) the same object serves every turn, until the agent or its system prompt changes.
 */
export function modelInput(state: RunState): ModelTurnInput {
  const agent = state.agent;
  const reused = state.modelTurn;
  if (reused !== undefined && reused.agent === agent && reused.system === state.system) return reused.input;
  const format = agent.outputType ? responseFormat(agent) : undefined;
  // Models that take no response format are told the schema in the system prompt.
  const system = format && !agent.model.supportsResponseFormat ? `${state.system}${state.system ? '\n\n' : ''}Reply with only JSON that matches this JSON Schema:\n${JSON.stringify(format.schema)}` : state.system;
  const input = new RunModelInput(state, system, format);
  if (state.runLog?.pending) input.logged = state.runLog.settle().catch(() => undefined);
  const compact = contextCompactor(state);
  if (compact) input.compact = compact;
  const hooks = state.hookSet;
  if (hooks.hooks.length === 0 && state.viewInjectors.length === 0) {
    if (!state.runLog) state.modelTurn = { agent, system: state.system, input };
    return input;
  }
  const ctx = hookContext(state);
  // Plugins' view injectors add to this request's view (after contextPolicy), then beforeModelCall hooks see it.
  const shape = viewShaper(state.viewInjectors, hooks, ctx);
  if (shape) input.shape = shape;
  if (hasHook(hooks, 'afterModelResponse')) {
    input.judge = (reply) => judgeReply(hooks, { role: 'assistant', content: reply.text, ...(reply.reasoning ? { reasoning: reply.reasoning } : {}), toolCalls: reply.calls, agent: agent.name }, ctx);
  }
  return input;
}

function responseFormat(agent: RunState['agent']): { type: 'json'; schema: Record<string, unknown>; name: string } {
  return { type: 'json', schema: z.toJSONSchema(agent.outputType!) as Record<string, unknown>, name: 'output' };
}

/** afterModelResponse asked for a retry: the reply is void (its usage still counts); a new turn asks again. */
export function discardReply(state: RunState, reply: ModelReply): void {
  spendOnReply(state, reply.usage, 1 + (reply.extraRequests ?? 0));
  const voided = { text: reply.text, reasoning: reply.reasoning, toolCalls: reply.calls };
  state.sink({ type: 'output_discarded', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, reason: 'afterModelResponse asked for a retry', voided });
}

export function recordReply(state: RunState, reply: ModelReply): void {
  spendOnReply(state, reply.usage, 1 + (reply.extraRequests ?? 0));
  state.lastReply = { finishReason: reply.finishReason, inputTokens: reply.usage.inputTokens };
  // Without reasoning (the common case) a plain literal: spreads in a per-turn literal are a slow path on Node 20.
  const message: AssistantMessage =
    reply.reasoning || reply.reasoningParts
      ? {
          role: 'assistant',
          content: reply.text,
          ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
          ...(reply.reasoningParts ? { reasoningParts: reply.reasoningParts } : {}),
          toolCalls: reply.calls,
          agent: state.agent.name,
        }
      : { role: 'assistant', content: reply.text, toolCalls: reply.calls, agent: state.agent.name };
  state.transcript.push(message);
  const verdict = reply.verdict;
  if (verdict && 'inject' in verdict) for (const text of verdict.inject) state.inbox.push({ text, source: 'hook' });
  if (!state.audience.quiet) state.sink({ type: 'message_completed', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, message, usage: { ...state.usage } });
  if (state.runLog) log(state, { kind: 'reply', turn: state.turn, message });
  state.batch = batchFor(state, message, verdict !== undefined && 'stop' in verdict);
}

/** One slot per requested call, keyed `<turn>.<index>`: repeated model ids never collide. */
export function batchFor(state: RunState, reply: AssistantMessage, stopped = false): Batch {
  const slots: CallSlot[] = reply.toolCalls.map((call, index) => ({
    key: `${state.turn}.${index}`,
    index,
    call,
    asked: call,
    state: 'pending',
    tool: undefined,
    raw: undefined,
    args: undefined,
    terminate: false,
    output: '',
  }));
  const byKey = new Map<string, CallSlot>();
  for (const slot of slots) byKey.set(slot.key, slot);
  // With resolveToolCall hooks the batch is resolved first (the chart's resolving step), which may make it sequential.
  const resolved = slots.length === 0 || !hasHook(state.hookSet, 'resolveToolCall');
  return { reply, slots, byKey, cursor: 0, sequential: slots.length > 0 && isSequentialBatch(state.agent, state.tools, reply), resolved, claimedHandoff: undefined, stopped, stopAfterTurn: undefined };
}

export function endTurn(state: RunState): void {
  if (!state.audience.quiet) state.sink({ type: 'turn_ended', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, usage: { ...state.usage } });
}

/** A `mailbox.post` message: the model sees it at its next request. */
export function queueMessage(state: RunState, text: string): void {
  state.inbox.push({ text, source: 'mailbox' });
}

/** A handoff tool's `handoff.request`: the target becomes the active agent when the turn ends. */
export function recordHandoff(state: RunState, target: Agent, inputFilter: HandoffInputFilter | undefined): void {
  state.pendingHandoff = { target, inputFilter };
}

/** Switches agent: the transcript carries over (through the filter, if any); tools and system prompt change. */
export function applyHandoff(state: RunState): void {
  const { target, inputFilter } = state.pendingHandoff!;
  state.pendingHandoff = undefined;
  const from = state.agent.name;
  try {
    if (inputFilter) {
      const kept = inputFilter(state.transcript.slice());
      state.transcript.length = 0;
      for (const message of kept) state.transcript.push(message);
    }
    useAgent(state, target);
  } catch (error) {
    state.stopError = asError(error);
    return;
  }
  // Logged at once (the head names the new agent), so a crash before its first reply resumes on it.
  log(state, { kind: 'handoff', turn: state.turn, from, to: target.name });
  state.sink({ type: 'handoff_occurred', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, from, to: target.name });
}
