import { DirectModelRequest } from '../actors/model-request.js';
import type { CompactedRequest, DiscardedAttempt, ModelReply, ModelTurnInput, RunSignal } from '../actors/model-turn.js';
import type { JudgedReply } from '../hooks.js';
import type { Model, ModelRequest } from '../models/model.js';
import type { RunState } from './run-state.js';
import { modelView, needsModelView } from './model-view.js';

type Request = Omit<ModelRequest, 'signal'>;

/**
 * What the model caller needs for a run's model turns (modelInput): methods that read the
 * run's state when called. One object, reused across turns while the agent and its system
 * prompt stay, instead of a literal of five closures per agent. `logged`, `compact`, `shape`
 * and `judge` are set by modelInput only when the run or agent has them (otherwise undefined,
 * as the literal's missing keys read).
 */
export class RunModelInput implements ModelTurnInput {
  readonly model: Model;
  logged?: Promise<void>;
  compact?: (request: Request, reason: 'threshold' | 'overflow', signal: AbortSignal) => Promise<CompactedRequest>;
  shape?: (request: Request) => Promise<Request>;
  judge?: (reply: ModelReply) => Promise<JudgedReply | undefined>;
  readonly #state: RunState;
  readonly #agent: RunState['agent'];
  readonly #system: string;
  readonly #format: ModelRequest['responseFormat'];

  constructor(state: RunState, system: string, format: ModelRequest['responseFormat']) {
    this.model = state.agent.model;
    this.#state = state;
    this.#agent = state.agent;
    this.#system = system;
    this.#format = format;
  }

  request(): Request {
    const state = this.#state;
    const agent = this.#agent;
    return { runId: state.runId, agent: agent.name, system: this.#system, messages: state.transcript, tools: state.toolSchemas, settings: agent.settings, responseFormat: this.#format };
  }

  converted(): Promise<Request> | undefined {
    if (!needsModelView(this.#state)) return undefined;
    return modelView(this.#state).then((messages) => ({ ...this.request(), messages }));
  }

  directRequest(abort: RunSignal): ModelRequest {
    const state = this.#state;
    const agent = this.#agent;
    return new DirectModelRequest(state.runId, agent.name, this.#system, state.transcript, state.toolSchemas, agent.settings, this.#format, state.historyLength, abort);
  }

  onTextDelta(delta: string): void {
    const state = this.#state;
    if (!state.audience.quiet) state.sink({ type: 'text_delta', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, delta });
  }

  onReasoningDelta(delta: string): void {
    const state = this.#state;
    if (!state.audience.quiet) state.sink({ type: 'reasoning_delta', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, delta });
  }

  onDiscard({ attempt, reason, text, reasoning, calls }: DiscardedAttempt): void {
    const state = this.#state;
    state.sink({ type: 'output_discarded', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, reason, attempt, voided: { text, reasoning, toolCalls: calls } });
  }
}
