import { nanoid } from 'nanoid';
import { createActor, type AnyActorRef } from 'xstate';
import { runImplementation } from '../actors/run-implementation.js';
import type { Agent } from '../agent.js';
import { RunCancelled, TroupeError, asError } from '../errors.js';
import { createRunMachine, type RunMachine } from '../machines/run.machine.js';
import type { Message, RunEvent, Usage } from '../types.js';
import { ApprovalDesk } from './approvals.js';
import { EventChannel } from './event-channel.js';
import { RunCore, type RunOptions } from './run-core.js';

export interface RunResult {
  readonly runId: string;
  readonly output: string;
  readonly usage: Usage;
  readonly turns: number;
  /** Name of the agent that produced the final output. */
  readonly agent: string;
  readonly transcript: readonly Message[];
}

/** Out-of-band approval decisions, e.g. from an HTTP endpoint. Each returns whether anything matched. */
export interface ApprovalControls {
  approve(callId: string): boolean;
  reject(callId: string): boolean;
  /** Decides every waiting call; returns how many. */
  release(decision: boolean): number;
  /** Call ids waiting for a decision. */
  pending(): string[];
}

let runMachine: RunMachine | undefined;

/** The run statechart bound to its implementation; built once per process. */
export function getRunMachine(): RunMachine {
  return (runMachine ??= createRunMachine(runImplementation));
}

/**
 * A started run: iterate it for events, await `result()`, `cancel()` it, or decide
 * approvals through `approvals`.
 */
export class RunHandle implements AsyncIterable<RunEvent> {
  readonly runId: string;
  readonly approvals: ApprovalControls;
  /** The run's root actor (for inspection). */
  readonly actor: AnyActorRef;
  private readonly channel: EventChannel;
  private readonly done: Promise<RunResult>;
  private readonly core: RunCore;
  private finished = false;

  /** `machine` is a seam for tests (e.g. mutant charts); runs use the shared run machine. */
  constructor(agent: Agent, input: string, options: RunOptions, machine: RunMachine = getRunMachine()) {
    const desk = new ApprovalDesk();
    this.runId = options.runId ?? options.checkpoint?.runId ?? `run_${nanoid(12)}`;
    this.channel = new EventChannel(
      (event) => {
        if (event.type === 'approval_required') desk.passed(event.call.id);
      },
      () => desk.consumerLeft(),
    );
    this.approvals = {
      approve: (callId) => desk.decide(callId, true),
      reject: (callId) => desk.decide(callId, false),
      release: (decision) => desk.release(decision),
      pending: () => desk.waitingCallIds(),
    };
    let resolve!: (result: RunResult) => void;
    let reject!: (error: Error) => void;
    this.done = new Promise<RunResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // result() may never be called; the rejection is still delivered to whoever awaits it.
    this.done.catch(() => undefined);

    const onAbort = (): void => this.cancel(abortReason(options.signal!));
    const core: RunCore = new RunCore(this.runId, [agent.name], agent, input, options, desk, {
      emit: (event, terminal) => {
        this.channel.push(event, terminal);
        if (!terminal) return;
        this.finished = true;
        options.signal?.removeEventListener('abort', onAbort);
        if (event.type === 'run_completed') {
          resolve({ runId: this.runId, output: event.output, usage: event.usage, turns: event.turns, agent: event.agent, transcript: core.transcript });
        } else if (event.type === 'run_failed') {
          reject(event.error);
        }
      },
    });
    this.core = core;
    this.actor = createActor(machine, { id: this.runId, input: { run: core }, ...(options.inspect ? { inspect: options.inspect } : {}) });
    // An error inside the statechart itself must still end the stream with run_failed.
    this.actor.subscribe({
      error: (error) => {
        core.fail(new TroupeError(`internal run error: ${asError(error).message}`, { cause: error }));
        core.emitFailed();
      },
    });
    core.attachRun(this.actor);
    if (options.signal) {
      if (options.signal.aborted) queueMicrotask(onAbort);
      else options.signal.addEventListener('abort', onAbort, { once: true });
    }
    this.actor.start();
    this.actor.send({ type: 'START' });
  }


  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    return this.channel[Symbol.asyncIterator]();
  }

  /** Resolves with the result or rejects with the typed error. Without an iterating consumer, events are discarded. */
  result(): Promise<RunResult> {
    if (!this.channel.started) this.stopListening();
    return this.done;
  }

  /** Ends the run with run_failed(RunCancelled); in-flight tools see their signal abort. */
  cancel(reason = 'cancelled'): void {
    if (this.finished) return;
    this.core.requestCancel(new RunCancelled(reason));
  }

  /** No consumer will read events: undecided approvals fall to the handler, then deny. */
  stopListening(): void {
    this.channel.drain();
  }
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason.message || 'aborted';
  return typeof reason === 'string' ? reason : 'aborted';
}

export const Runner = {
  /** Runs to completion. Without an approvalHandler, gated calls are denied. */
  run<Deps>(agent: Agent<Deps>, input: string, options: RunOptions<Deps> = {}): Promise<RunResult> {
    const handle = new RunHandle(agent, input, options);
    handle.stopListening();
    return handle.result();
  },

  /** Starts a run and returns its handle; iterate it for events. */
  stream<Deps>(agent: Agent<Deps>, input: string, options: RunOptions<Deps> = {}): RunHandle {
    return new RunHandle(agent, input, options);
  },
};
