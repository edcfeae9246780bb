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
  /** Emits `tool_call_progress`; never shown to the model. */
  onUpdate(progress: unknown): void;
}
