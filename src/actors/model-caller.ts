import type { ActorLogic, AnyActorRef, EventObject, Snapshot } from 'xstate';
import { streamModelTurn, type ModelReply, type ModelTurnInput, type RunSignal } from './model-turn.js';

/**
 * The run asks its model caller for one model turn (sent on entering `turn.model`). The turn's
 * input (agent, model, transcript) is private: inspectors and serialisers see only the type
 * and the model's name, as they saw only an invoked actor's id before.
 */
export class ModelRequestEvent {
  readonly type = 'model.request' as const;
  /** The model's name (what the tracer and inspectors read of the request). */
  readonly model: string;
  readonly #input: ModelTurnInput;
  readonly #abort: RunSignal;

  /** `abort` holds the run's own signal: every way out of `turn.model` other than the answer ends the run, which aborts it. */
  constructor(input: ModelTurnInput, abort: RunSignal) {
    this.model = input.model.name;
    this.#input = input;
    this.#abort = abort;
  }

  /** Streams the turn; rejects with ModelError or HookError. */
  stream(): Promise<ModelReply> {
    return streamModelTurn(this.#input, this.#abort);
  }
}

/** The model caller's answer to one `model.request`, sent to the run. */
export type ModelAnswerEvent =
  /** `output`: the reply (as an invoke's done event carries it, so guards and actions read it the same way). */
  | { readonly type: 'model.replied'; readonly output: ModelReply }
  /** The stream or a model-side hook failed (ModelError, HookError or what the model threw). */
  | { readonly type: 'model.failed'; readonly error: unknown };

type CallerSnapshot = Snapshot<undefined> & { readonly context: Record<string, never> };

/**
 * One actor per run, for the whole run, that makes the run's model requests: the run sends
 * `model.request`, the caller streams the turn (streamModelTurn) and answers with
 * `model.replied` or `model.failed`. A long-lived caller instead of one invoked actor per
 * turn: a turn then costs two messages, not an actor (and its AbortController) created,
 * started, stopped and removed. A run that has ended no longer listens: late answers are dropped.
 */
export const modelCallerLogic: ActorLogic<CallerSnapshot, ModelRequestEvent | { type: 'xstate.stop' }, undefined, any, EventObject> = {
  config: 'troupe.modelCaller',
  transition(snapshot, event, scope) {
    if (event.type === 'xstate.stop') return { status: 'stopped', output: undefined, error: undefined, context: {} };
    if (event.type !== 'model.request' || snapshot.status !== 'active') return snapshot;
    const run = (scope.self as AnyActorRef)._parent!;
    const answer = (message: ModelAnswerEvent): void => {
      if (run.getSnapshot().status === 'active') run.send(message);
    };
    event.stream().then(
      (output) => answer({ type: 'model.replied', output }),
      (error: unknown) => answer({ type: 'model.failed', error }),
    );
    return snapshot;
  },
  getInitialSnapshot() {
    return { status: 'active', output: undefined, error: undefined, context: {} };
  },
  getPersistedSnapshot(snapshot) {
    return { status: snapshot.status, output: undefined, error: undefined, context: {} } as Snapshot<unknown>;
  },
};
