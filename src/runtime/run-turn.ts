import type { ModelReply, ModelTurnInput } from '../actors/model-turn.js';
import { asError } from '../errors.js';
import { isSequentialBatch } from '../rules/batch.js';
import type { AssistantMessage, Message } from '../types.js';
import { log } from './run-end.js';
import { spendOwn } from './run-spend.js';
import { emptyBatch, useAgent, type Batch, type CallSlot, type HandoffInputFilter, type RunState } from './run-state.js';
import type { Agent } from '../agent.js';

/** `run_started`; a fresh run logs its input, a resumed one re-opens its stored turn. Sub-runs announce themselves to their parent. */
export function startRun(state: RunState): void {
  state.parentRef?.send({ type: 'child.started', runId: state.runId, ref: state.self });
  state.sink({ type: 'run_started', runId: state.runId, path: state.path, agent: state.agent.name, input: state.input });
  if (state.resumed) {
    if (state.resumeInTurn) state.sink({ type: 'turn_started', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn });
    return;
  }
  const message: Message = { role: 'user', content: state.input };
  state.transcript.push(message);
  log(state, { kind: 'input', message });
}

/** A new turn: waiting mailbox messages join the transcript before the model request. */
export function startTurn(state: RunState): void {
  state.turn++;
  state.batch = emptyBatch();
  for (const text of state.inbox.splice(0)) {
    const message: Message = { role: 'user', content: text };
    state.transcript.push(message);
    log(state, { kind: 'input', message });
  }
  state.sink({ type: 'turn_started', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn });
}

export function modelInput(state: RunState): ModelTurnInput {
  const agent = state.agent;
  return {
    model: agent.model,
    request: () => ({ agent: agent.name, system: state.system, messages: state.transcript, tools: state.toolSchemas, settings: agent.settings }),
    onTextDelta: (delta) => state.sink({ type: 'text_delta', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, delta }),
    onReasoningDelta: (delta) => state.sink({ type: 'reasoning_delta', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, delta }),
  };
}

export function recordReply(state: RunState, reply: ModelReply): void {
  spendOwn(state, { usage: { ...reply.usage, requests: 1 }, toolCalls: 0 });
  const message: AssistantMessage = {
    role: 'assistant',
    content: reply.text,
    ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
    toolCalls: reply.calls,
    agent: state.agent.name,
  };
  state.transcript.push(message);
  state.sink({ type: 'message_completed', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, message, usage: { ...state.usage } });
  log(state, { kind: 'reply', turn: state.turn, message });
  state.batch = batchFor(state, message);
}

/** One slot per requested call, keyed `<turn>.<index>`: repeated model ids never collide. */
export function batchFor(state: RunState, reply: AssistantMessage): Batch {
  const slots: CallSlot[] = reply.toolCalls.map((call, index) => ({
    key: `${state.turn}.${index}`,
    index,
    call,
    state: 'pending',
    tool: undefined,
    raw: undefined,
    args: undefined,
    terminate: false,
    output: '',
  }));
  const byKey = new Map<string, CallSlot>();
  for (const slot of slots) byKey.set(slot.key, slot);
  return { reply, slots, byKey, cursor: 0, sequential: slots.length > 0 && isSequentialBatch(state.agent, state.tools, reply), claimedHandoff: undefined };
}

export function endTurn(state: RunState): void {
  state.sink({ type: 'turn_ended', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, usage: { ...state.usage } });
}

/** A `mailbox.post` message: the model sees it at its next request. */
export function queueMessage(state: RunState, text: string): void {
  state.inbox.push(text);
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
  state.sink({ type: 'handoff_occurred', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, from, to: target.name });
}
