import type { Agent } from '../agent.js';
import type { AncestorBudget } from '../rules/budget.js';
import type { RunPort } from '../tools/call-context.js';
import type { Budget } from '../types.js';
import type { RunInput, RunState } from './run-state.js';

/**
 * The port a run gives its calls' contexts: closures over its own state that read views or
 * send the run actor messages. Built once per run; never handed to another run.
 */
export function createRunPort(state: RunState): RunPort {
  return {
    runId: state.runId,
    deps: state.deps,
    transcript: state.transcript,
    budget: state.budget,
    mailbox: state.mailbox,
    abort: state.abortController,
    logic: state.logic,
    usage: () => ({ ...state.usage }),
    agentView: () => state.agentView,
    progress: (key, progress) => {
      const slot = state.batch.byKey.get(key);
      if (!slot || slot.state !== 'dispatched') return;
      state.sink({ type: 'tool_call_progress', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, call: slot.call, progress });
    },
    send: (event) => {
      if (state.self.getSnapshot().status === 'active') state.self.send(event);
    },
    subRunInput: (agent, input, options, key) => subRunInput(state, agent as Agent, input, options, key),
    askHuman: async (key, question, signal) => {
      const slot = state.batch.byKey.get(key);
      if (!slot) throw new Error('askHuman: the call is not running');
      const base = { runId: state.runId, path: state.path, agent: state.agent.name };
      const turn = state.turn;
      const requestId = `${state.runId}:${key}`;
      const view = { requestId, ...base, callId: slot.call.id, question: question.question, ...(question.options ? { options: question.options } : {}), multiSelect: question.multiSelect, requestedAt: Date.now() };
      const waiting = state.humans.ask(view, signal);
      state.sink({ type: 'human_request', ...base, turn, call: slot.call, requestId, question: question.question, ...(question.options ? { options: question.options } : {}), multiSelect: question.multiSelect });
      const answer = await waiting;
      state.sink({ type: 'human_answer', ...base, turn, call: slot.call, requestId, answer });
      return answer;
    },
  };
}

/** A sub-run's input: data and addresses only (its own run id, the tree's sinks, every ancestor's budget as a copy). */
function subRunInput(state: RunState, agent: Agent, input: string, options: { maxTurns?: number; budget?: Budget }, key: string): RunInput {
  const self: AncestorBudget = { runId: state.runId, budget: state.budget, startedAt: state.startedAt, usage: { ...state.usage }, toolCalls: state.toolCallCount };
  return {
    runId: `${state.runId}/${key}`,
    agent,
    input,
    options: {
      ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
      ...(options.budget ? { budget: options.budget } : {}),
      context: state.deps,
      ...(state.options.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: state.options.approvalTimeoutMs } : {}),
      // A durable run's sub-runs keep their own log under their own id (same store, same lease owner), so resuming the parent resumes them.
      ...(state.runLog ? { checkpoint: { store: state.runLog.store, runId: `${state.runId}/${key}`, ifRunExists: 'resume' as const, owner: state.runLog.owner, leaseMs: state.runLog.leaseMs } } : {}),
    },
    parentPath: state.path,
    sink: state.sink,
    audience: state.audience,
    approvals: state.approvals,
    humans: state.humans,
    parent: { ref: state.self, ancestors: [self, ...state.ancestors.map((a) => ({ ...a, usage: { ...a.usage } }))] },
  };
}
