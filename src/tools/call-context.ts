import type { AnyActorRef } from 'xstate';
import type { Budget, Message, Usage } from '../types.js';
import type { Mailbox, RunContext } from './context.js';

/** What a call context reads from its run; implemented by the run core. */
export interface CallContextHost<Deps> {
  readonly runId: string;
  readonly deps: Deps;
  readonly transcript: readonly Message[];
  readonly usage: Usage;
  readonly budget: Budget | undefined;
  readonly mailbox: Mailbox;
  readonly runSignal: AbortSignal;
  readonly agentView: { readonly name: string };
  progress(callId: string, progress: unknown): void;
  /** Handoff tools: make `target` the active agent when the turn ends. */
  requestHandoff(target: any, inputFilter?: (transcript: readonly Message[]) => Message[]): void;
  /** Agent-as-tool: start `agent` as a child run spawned by this call's actor. */
  startSubRun(agent: any, input: string, options: { maxTurns?: number; budget?: Budget }, ctx: CallContext<Deps>): { readonly done: Promise<{ runId: string; output: string; agent: string; turns: number; usage: Usage }> };
}

/**
 * RunContext for one call. Methods live on the prototype and the signal is the run's own
 * unless an attempt needs its own (timeouts), so a call without timeout allocates nothing
 * beyond this object.
 */
export class CallContext<Deps = unknown> implements RunContext<Deps> {
  /** Per-attempt signal while an attempt with a timeout runs. */
  attemptSignal: AbortSignal | undefined;
  /** The tool-call actor running this call (set when it starts); sub-runs hang from it. */
  actor: AnyActorRef | undefined;
  readonly agent: { readonly name: string };

  constructor(
    /** The run this call belongs to. Internal: for handoff and agent-as-tool plumbing. */
    readonly host: CallContextHost<Deps>,
    readonly callId: string,
    readonly turn: number,
  ) {
    this.agent = host.agentView;
  }

  get runId(): string { return this.host.runId; }
  get deps(): Deps { return this.host.deps; }
  get transcript(): readonly Message[] { return this.host.transcript; }
  get usage(): Readonly<Usage> { return { ...this.host.usage }; }
  get budget(): Readonly<Budget> | undefined { return this.host.budget; }
  get mailbox(): Mailbox { return this.host.mailbox; }
  get signal(): AbortSignal { return this.attemptSignal ?? this.host.runSignal; }

  onUpdate(progress: unknown): void {
    this.host.progress(this.callId, progress);
  }
}
