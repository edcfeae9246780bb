import type { AnyActorRef } from 'xstate';
import { Agent } from '../agent.js';
import { UserError } from '../errors.js';
import { runSubRun } from '../actors/tool-call.js';
import type { AncestorBudget } from '../rules/budget.js';
import type { RunPort, SubRunOutcome } from '../tools/call-context.js';
import type { Budget, Usage } from '../types.js';
import { runExtra } from './extra.js';
import type { RunInput, RunState } from './run-state.js';

/**
 * The port a run gives its calls' contexts: methods over its own state that read views or
 * send the run actor messages. Built once per run (with its first call context); never
 * handed to another run. A class rather than a literal of closures: one object per run
 * instead of eight closures and their context (call contexts call its members as methods).
 */
export function createRunPort(state: RunState): RunPort {
  return new StatePort(state);
}

/** The run's port for call contexts, built on first use (a text-only run never needs one). */
export function runPort(state: RunState): RunPort {
  return (state.port ??= createRunPort(state));
}

class StatePort implements RunPort {
  readonly runId: string;
  readonly deps: unknown;
  readonly transcript: RunState['transcript'];
  readonly budget: Budget | undefined;
  readonly mailbox: RunState['mailbox'];
  readonly abort: RunState['abortController'];
  readonly #state: RunState;

  constructor(state: RunState) {
    this.runId = state.runId;
    this.deps = state.deps;
    this.transcript = state.transcript;
    this.budget = state.budget;
    this.mailbox = state.mailbox;
    this.abort = state.abortController;
    this.#state = state;
  }

  usage(): Usage {
    return { ...this.#state.usage };
  }

  extra(): Record<string, unknown> {
    return runExtra(this.#state).read();
  }

  agentView(): { readonly name: string } {
    return this.#state.agentView;
  }

  progress(key: string, progress: unknown): void {
    const state = this.#state;
    const slot = state.batch.byKey.get(key);
    if (!slot || slot.state !== 'dispatched') return;
    state.sink({ type: 'tool_call_progress', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, call: slot.call, progress });
  }

  send(event: { type: string; [key: string]: unknown }): void {
    const self = this.#state.self;
    if (self.getSnapshot().status === 'active') self.send(event);
  }

  runSubRun(agent: unknown, input: string, options: { maxTurns?: number; budget?: Budget }, key: string, callActor: AnyActorRef, signal: AbortSignal): Promise<SubRunOutcome> {
    if (!(agent instanceof Agent)) return Promise.resolve({ status: 'failed', runId: `${this.runId}/${key}`, error: new UserError('An agent tool needs an Agent to run.') });
    const runInput = subRunInput(this.#state, agent, input, options, key);
    // Sub-runs run on the same chart as their parent (so a test's mutant chart reaches them).
    return runSubRun(callActor, this.#state.logic, runInput.runId, runInput, signal);
  }

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
    waits: state.waits,
    parent: { ref: state.self, ancestors: [self, ...state.ancestors.map((a) => ({ ...a, usage: { ...a.usage } }))] },
  };
}
