import { nanoid } from 'nanoid';
import type { AnyActorRef } from 'xstate';
import type { Agent } from '../agent.js';
import type { RunMachine } from '../machines/run.machine.js';
import type { RunEvent } from '../types.js';
import { ApprovalRouter, type ApprovalTarget, type PendingApproval } from './approvals.js';
import { EventChannel } from './event-channel.js';
import { launchRun, type LaunchedRun, type RunResult } from './launch.js';
import { getRunMachine } from './run-machine.js';
import type { RunOptions } from './run-options.js';

export type { RunResult } from './launch.js';

/**
 * Decisions for calls waiting anywhere in the run tree (sub-runs included), addressed by
 * approval id. A target is an approvalId, a bare call id when exactly one waiting call has
 * it, or `{ runId, callId }` of the run that waits.
 */
export interface ApprovalControls {
  /** Every waiting call of the tree. */
  pending(): PendingApproval[];
  /** @returns false when nothing matches. @throws UserError when a bare call id is ambiguous (the message lists the approval ids). */
  approve(target: ApprovalTarget): boolean;
  /** Denies; the model sees `reason`. @returns false when nothing matches. @throws UserError when a bare call id is ambiguous. */
  reject(target: ApprovalTarget, reason?: string): boolean;
  /** Decides every waiting call at once; returns how many. */
  release(approved: boolean): number;
  /**
   * Resolves with the decision (true = approved) once the target is decided by anyone: the
   * consumer, the handler, a timeout or a cancel. Undefined when it is not waiting;
   * rejects with UserError when a bare call id is ambiguous.
   */
  settled(target: ApprovalTarget): Promise<boolean | undefined>;
  /**
   * Calls `listener` with each call that starts waiting from now on, anywhere in the tree
   * (also while the consumer is still reading earlier events). Returns an unsubscribe function.
   */
  onOpened(listener: (approval: PendingApproval) => void): () => void;
}

/**
 * A started run: iterate it for events (any number of loops, each sees every event), await
 * `result()`, `cancel()` it, or decide approvals through `approvals`.
 */
export class RunHandle implements AsyncIterable<RunEvent> {
  readonly runId: string;
  readonly approvals: ApprovalControls;
  /** The run's root actor (for inspection). */
  readonly actor: AnyActorRef;
  private readonly channel: EventChannel;
  private readonly run: LaunchedRun;
  private readonly router: ApprovalRouter;

  /** `machine` is a seam for tests (e.g. mutant charts); runs use the shared run machine. */
  constructor(agent: Agent, input: string, options: RunOptions, machine: RunMachine = getRunMachine()) {
    const router = (this.router = new ApprovalRouter());
    this.runId = options.runId ?? options.checkpoint?.runId ?? `run_${nanoid(12)}`;
    const rootId = this.runId;
    this.channel = new EventChannel(
      (event) => {
        if (event.type === 'approval_required') router.passed(event.approvalId);
      },
      () => router.consumerLeft(),
    );
    this.approvals = {
      pending: () => router.pending(),
      approve: (target) => router.decide(target, true),
      reject: (target, reason) => router.decide(target, false, reason),
      release: (approved) => router.release(approved),
      settled: (target) => router.settled(target),
      onOpened: (listener) => router.onOpened(listener),
    };
    this.run = launchRun({
      agent,
      input,
      options,
      runId: this.runId,
      approvals: router,
      machine,
      sink: (event) => this.channel.push(event, event.runId === rootId && (event.type === 'run_completed' || event.type === 'run_failed')),
    });
    this.actor = this.run.actor;
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    return this.channel[Symbol.asyncIterator]();
  }

  /**
   * Resolves with the result or rejects with the typed error. Events are still kept for a
   * later loop; when no loop has started, approvals go to the agent's approvalHandler at
   * once ("ask" then waits for `approvals`), since no consumer is there to decide them.
   */
  async result(): Promise<RunResult> {
    if (!this.channel.started) this.passApprovalsToHandler();
    const outcome = await this.run.outcome;
    if (outcome.status === 'failed') throw outcome.error;
    const { status: _status, ...result } = outcome;
    return result;
  }

  /** Ends the run with run_failed(RunCancelled); in-flight tools and sub-runs see their signal abort. */
  cancel(reason = 'cancelled'): void {
    this.run.cancel(reason);
  }

  /** No consumer will read events: nothing is kept, undecided approvals fall to the handler, then deny. */
  stopListening(): void {
    this.channel.drain();
  }

  private passApprovalsToHandler(): void {
    this.router.passImmediately = true;
    for (const wait of this.router.pending()) this.router.passed(wait.approvalId);
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

export { getRunMachine } from './run-machine.js';
