import { nanoid } from 'nanoid';
import type { AnyActorRef } from 'xstate';
import type { Agent } from '../agent.js';
import type { RunMachine } from '../machines/run.machine.js';
import { getRunMachine } from './run-machine.js';
import type { RunEvent } from '../types.js';
import { ApprovalDesk } from './approvals.js';
import { EventChannel } from './event-channel.js';
import { launchRun, type LaunchedRun, type RunResult } from './launch.js';
import type { RunOptions } from './run-core.js';

export type { RunResult } from './launch.js';

/** Out-of-band approval decisions, e.g. from an HTTP endpoint. Each returns whether anything matched. */
export interface ApprovalControls {
  approve(callId: string): boolean;
  reject(callId: string): boolean;
  /** Decides every waiting call; returns how many. */
  release(decision: boolean): number;
  /** Call ids waiting for a decision. */
  pending(): string[];
  /**
   * Resolves with the decision (true = approved) once `callId` is decided by anyone: the
   * consumer, the handler, a timeout or a cancel. Undefined when that call is not waiting.
   */
  settled(callId: string): Promise<boolean | undefined>;
}

export { getRunMachine } from './run-machine.js';

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
  private readonly run: LaunchedRun;

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
      settled: (callId) => desk.settled(callId),
    };
    this.run = launchRun({
      agent,
      input,
      options,
      runId: this.runId,
      parentPath: [],
      desk,
      machine,
      forward: (event, terminal) => this.channel.push(event, terminal),
    });
    this.actor = this.run.actor;
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    return this.channel[Symbol.asyncIterator]();
  }

  /** Resolves with the result or rejects with the typed error. Without an iterating consumer, events are discarded. */
  result(): Promise<RunResult> {
    if (!this.channel.started) this.stopListening();
    return this.run.done;
  }

  /** Ends the run with run_failed(RunCancelled); in-flight tools and sub-runs see their signal abort. */
  cancel(reason = 'cancelled'): void {
    this.run.cancel(reason);
  }

  /** No consumer will read events: undecided approvals fall to the handler, then deny. */
  stopListening(): void {
    this.channel.drain();
  }
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
