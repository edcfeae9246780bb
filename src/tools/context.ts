import type { Budget, Message, Usage } from '../types.js';

/** Messages a tool posts for the agent; they are added to the transcript before the next model request. */
export interface Mailbox {
  post(text: string): void;
}

/**
 * The live run handle a tool receives as its second argument. Never part of the schema.
 * `transcript` and `usage` are read-only views of the running state.
 */
export interface RunContext<Deps = unknown> {
  readonly runId: string;
  readonly callId: string;
  readonly turn: number;
  readonly agent: { readonly name: string };
  readonly deps: Deps;
  readonly transcript: readonly Message[];
  readonly usage: Readonly<Usage>;
  readonly budget: Readonly<Budget> | undefined;
  /** Aborted when the run is cancelled or this attempt times out. */
  readonly signal: AbortSignal;
  readonly mailbox: Mailbox;
  /**
   * The run's shared state (CubePi's `ctx.extra`): one plain JSON object for the whole run,
   * the same object in every tool and hook of the run; change it in place. A durable run stores
   * it when it changes (with the next entry of its log) and a resumed run gets it back.
   * Only JSON survives a resume; a value JSON cannot write (a cycle, a BigInt) fails the run.
   */
  readonly extra: Record<string, unknown>;
  /** Emits `tool_call_progress`; never shown to the model. */
  onUpdate(progress: unknown): void;
}
