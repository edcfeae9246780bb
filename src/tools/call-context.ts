import type { AnyActorRef } from 'xstate';
import type { Budget, Message, Usage } from '../types.js';
import type { Mailbox, RunContext } from './context.js';

/** Internal key of a call context's port to its own run (not exported from the package). */
export const RUN_PORT: unique symbol = Symbol('troupe.runPort');

/**
 * What a call may do with the run it belongs to: read views of it and send it messages.
 * Built by the run over its own state (members are called as methods, never unbound); a port
 * is never handed to another run (a sub-run gets data and its parent's address in its input, not this).
 */
export interface RunPort {
  readonly runId: string;
  readonly deps: unknown;
  /** Read-only view of the transcript (appended in place by the run). */
  readonly transcript: readonly Message[];
  readonly budget: Budget | undefined;
  readonly mailbox: Mailbox;
  /** The run's abort signal, created when a context first reads it (RunAbort). */
  readonly abort: { readonly signal: AbortSignal };
  usage(): Usage;
  /** The run's `ctx.extra` (made on first read). */
  extra(): Record<string, unknown>;
  agentView(): { readonly name: string };
  /** Emits tool_call_progress for the call `key` while it runs. */
  progress(key: string, progress: unknown): void;
  /** A message to the run actor (e.g. `handoff.request`). */
  send(event: { type: string; [key: string]: unknown }): void;
  /**
   * Runs `agent` on `input` as a sub-run started by call `key` (a child run actor of `callActor`,
   * with its own run id, the tree's sinks and every ancestor's budget) and resolves with how it
   * ended. Aborting `signal` cancels it. Never rejects.
   */
  runSubRun(agent: unknown, input: string, options: { maxTurns?: number; budget?: Budget }, key: string, callActor: AnyActorRef, signal: AbortSignal): Promise<SubRunOutcome>;
}

/** How a sub-run ended, as the call that started it sees it. */
export type SubRunOutcome =
  | { readonly status: 'completed'; readonly runId: string; readonly output: string; readonly agent: string; readonly turns: number; readonly usage: Usage }
  | { readonly status: 'failed' | 'cancelled'; readonly runId: string; readonly error: Error }
  | { readonly status: 'suspended'; readonly runId: string };

/**
 * RunContext for one call. Methods live on the prototype and the signal is the run's own
 * unless an attempt needs its own (timeouts), so a call without timeout allocates nothing
 * beyond this object.
 */
export class CallContext<Deps = unknown> implements RunContext<Deps> {
  /** Per-attempt signal while an attempt with a timeout runs. */
  attemptSignal: AbortSignal | undefined;
  /** The tool-call actor running this call (set when it starts); sub-runs are its children. */
  actor: AnyActorRef | undefined;
  readonly agent: { readonly name: string };
  readonly [RUN_PORT]: RunPort;

  constructor(
    port: RunPort,
    readonly callId: string,
    readonly turn: number,
    /** Unique in the run (`<turn>.<index>`); the model's callId may repeat. */
    readonly key: string,
  ) {
    this[RUN_PORT] = port;
    this.agent = port.agentView();
  }

  get runId(): string { return this[RUN_PORT].runId; }
  get deps(): Deps { return this[RUN_PORT].deps as Deps; }
  get transcript(): readonly Message[] { return this[RUN_PORT].transcript; }
  get usage(): Readonly<Usage> { return this[RUN_PORT].usage(); }
  get budget(): Readonly<Budget> | undefined { return this[RUN_PORT].budget; }
  get mailbox(): Mailbox { return this[RUN_PORT].mailbox; }
  get signal(): AbortSignal { return this.attemptSignal ?? this[RUN_PORT].abort.signal; }
  get extra(): Record<string, unknown> { return this[RUN_PORT].extra(); }

  onUpdate(progress: unknown): void {
    this[RUN_PORT].progress(this.key, progress);
  }
}

/** The port of a context built by troupe, or undefined for a hand-made RunContext. */
export function portOf(ctx: RunContext<any>): RunPort | undefined {
  return ctx instanceof CallContext ? ctx[RUN_PORT] : undefined;
}
