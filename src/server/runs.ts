import { nanoid } from 'nanoid';
import type { Agent } from '../agent.js';
import type { InspectionFeed } from '../inspect/feed.js';
import { errorToWire, sanitize } from '../inspect/sanitize.js';
import type { ApprovalDecider, ApprovalState, WireError, WireRunEvent } from '../inspect/wire.js';
import type { PendingApproval } from '../runtime/approvals.js';
import { Runner, type RunHandle } from '../runtime/runner.js';
import type { RunOptions } from '../runtime/run-options.js';
import type { CheckpointStore } from '../store/checkpoint-store.js';
import { getRunMachine } from '../runtime/run-machine.js';
import type { RunStatus } from '../run-status.js';
import type { ApprovalRequiredEvent, Budget, ContentPart, Message, RunEvent, Usage } from '../types.js';
import { EventLog, type DroppedEvents } from './event-log.js';
import { RUN_EVENT_LIMITS, feedRunEvent, serializeRunEvent } from './serialize.js';

import type { PendingApprovalView, RunStartParams, RunSubscriber, RunSummary } from './run-views.js';

export type { PendingApprovalView, RunStartParams, RunSubscriber, RunSummary } from './run-views.js';

/** One approval the server tracks, from the first time it saw it waiting until it is decided. */
interface Hold {
  readonly view: PendingApprovalView;
  /** Settles with the final state once the call is decided (by the API, the timeout or the run). */
  readonly done: Promise<ApprovalState>;
  /** Records the final state (the first call wins) and publishes it. */
  finish(state: ApprovalState, decidedBy: ApprovalDecider, reason?: string): void;
}

/**
 * One run started through the server. A server-side consumer reads every event, whether or
 * not an HTTP client is still attached, so a disconnect never stops or leaks the run.
 *
 * Approvals: the consumer does not pull past an `approval_required` event until the call is
 * decided (POST /api/chat/approve → `handle.approvals`), `approvalTimeoutMs` passes (deny),
 * or the run decides it otherwise (cancel). Pulling past it would hand the call to the
 * agent's approvalHandler and deny it when there is none; holding keeps the decision with
 * the API. Events of calls already in flight wait in the run's buffer meanwhile.
 *
 * Holds are keyed by `approvalId`, never by call id: two sub-runs may both wait on a call
 * `k1`. Every call the runtime lists as waiting is tracked (published to the feed, timed,
 * decidable), also the ones whose events sit in the buffer behind the one held.
 */
export class ServerRun {
  readonly id: string;
  readonly agentName: string;
  /** The run's first agent (edited approval args are validated against its graph's tools). */
  readonly agent: Agent;
  readonly input: string;
  readonly startedAt: number;
  status: RunStatus = 'running';
  endedAt: number | undefined;
  output: string | undefined;
  error: WireError | undefined;
  usage: Usage | undefined;
  turns: number | undefined;
  readonly handle: RunHandle;
  /** Settles when the server consumer has read the last event. */
  readonly done: Promise<void>;
  private readonly subscribers = new Set<RunSubscriber>();
  private readonly holds = new Map<string, Hold>();
  private readonly feed: InspectionFeed;
  private readonly approvalTimeoutMs: number;
  private readonly log: EventLog;
  private eventCount = 0;
  private readonly budget: Budget | undefined;
  /** The tree's usage so far while the run goes (the terminal event's usage replaces it). */
  private readonly liveUsage: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 };

  constructor(params: RunStartParams) {
    this.id = params.resumeId ?? params.runId ?? `run_${nanoid(12)}`;
    this.agentName = params.agentName;
    this.agent = params.agent;
    this.input = params.input;
    this.startedAt = params.stored?.startedAt ?? Date.now();
    if (params.stored) Object.assign(this.liveUsage, params.stored.usage);
    this.feed = params.feed;
    this.approvalTimeoutMs = params.approvalTimeoutMs;
    this.log = new EventLog(params.maxEvents, params.maxEventBytes);
    this.budget = params.runOptions.budget;
    // The chart definition is sent once per feed, so a page can draw runs it never inspected.
    this.feed.definitionFor(getRunMachine());
    const inspect = this.feed.observerFor(this.id);
    this.publishRun(inspect !== undefined);
    const options: RunOptions = {
      ...params.runOptions,
      runId: this.id,
      ...(inspect ? { inspect } : {}),
      ...(params.checkpointStore ? { checkpoint: { store: params.checkpointStore, runId: this.id, ...(params.leaseMs !== undefined ? { leaseMs: params.leaseMs } : {}), ...(params.suspendOnWait ? { suspendOnWait: true } : {}) } } : {}),
    };
    this.handle =
      params.resumeId !== undefined && params.checkpointStore
        ? Runner.resume(
            params.agent,
            { store: params.checkpointStore, runId: params.resumeId, ...(params.leaseMs !== undefined ? { leaseMs: params.leaseMs } : {}), claimWaitMs: params.leaseMs ?? 30_000, ...(params.suspendOnWait ? { suspendOnWait: true } : {}) },
            { ...params.runOptions, ...(inspect ? { inspect } : {}) },
          )
        : Runner.stream(params.agent, params.messages ? [...params.messages] : params.parts ? [{ role: 'user', content: params.parts }] : params.input, options);
    // Every waiting call is held from the moment it opens, even while the consumer reads earlier events.
    this.handle.approvals.onOpened((approval) => {
      if (!this.holds.has(approval.approvalId)) this.track(approval);
    });
    this.feed.track(this.id, this.handle.actor);
    this.done = this.consume();
  }

  get finished(): boolean {
    return this.status !== 'running';
  }

  /** Events kept (bounded by `maxEvents` and `maxEventBytes`; drops are counted in `dropped`). */
  get events(): WireRunEvent[] {
    return this.log.events;
  }

  /** Events no longer kept and their bytes; `events` + `dropped.count` = every event of the run. */
  get dropped(): DroppedEvents {
    return this.log.dropped;
  }

  /** UTF-8 bytes of the kept events' JSON. */
  get eventBytes(): number {
    return this.log.bytes;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /**
   * Replays the events kept so far, then streams the rest; `end` is called once the run is
   * over. `index` is the event's number in the run: a replay skips the numbers of dropped events.
   */
  subscribe(subscriber: RunSubscriber): () => void {
    for (const { seq, event } of this.log.entriesWithSeq()) subscriber.event(event, seq);
    if (this.finished) {
      subscriber.end();
      return () => undefined;
    }
    this.subscribers.add(subscriber);
    return () => void this.subscribers.delete(subscriber);
  }

  /** Calls of this run tree waiting for a decision, in the order the runtime opened them. */
  pendingApprovals(): PendingApprovalView[] {
    const views: PendingApprovalView[] = [];
    for (const approval of this.sync()) {
      const hold = this.holds.get(approval.approvalId);
      if (hold) views.push(hold.view);
    }
    return views;
  }

  /**
   * Decides the waiting call `approvalId` (of this run or a sub-run; also one the consumer
   * has not reached yet). `reason` (deny only) reaches the model with the denial; `args`
   * (approve only) replaces the call's arguments (validated by the run). Returns
   * false when no call with that approval id is waiting; never throws for an unknown id.
   */
  decide(approvalId: string, approve: boolean, reason?: string, args?: Record<string, unknown>): boolean {
    if (!this.sync().some((approval) => approval.approvalId === approvalId)) return false;
    const decided = approve ? this.handle.approvals.approve(approvalId, args !== undefined ? { args } : undefined) : this.handle.approvals.reject(approvalId, reason);
    if (!decided) return false;
    this.holds.get(approvalId)?.finish(approve ? 'approved' : 'denied', 'api', reason);
    return true;
  }

  cancel(reason: string): void {
    this.handle.cancel(reason);
    this.settleDecidedHolds('cancelled');
  }

  summary(): RunSummary {
    return {
      runId: this.id,
      agent: this.agentName,
      input: this.input,
      status: this.status,
      startedAt: this.startedAt,
      endedAt: this.endedAt,
      output: this.output,
      error: this.error,
      usage: this.usage ?? (this.liveUsage.requests > 0 ? { ...this.liveUsage } : undefined),
      turns: this.turns,
      events: this.eventCount,
      pendingApprovals: this.pendingApprovals(),
      budget: this.budget,
    };
  }

  private async consume(): Promise<void> {
    try {
      for await (const event of this.handle) {
        this.record(event);
        if (event.type === 'approval_required') await this.hold(event);
      }
    } catch (error) {
      // Iteration never throws by contract; keep the server alive if it ever does.
      if (this.status === 'running') this.finish('failed', undefined, errorToWire(error));
    }
    if (this.status === 'running') this.finish('failed', undefined, { name: 'TroupeError', code: 'TROUPE_ERROR', message: 'run stream ended without a terminal event' });
    for (const subscriber of this.subscribers) safely(() => subscriber.end());
    this.subscribers.clear();
    this.feed.untrack(this.id);
  }

  private record(event: RunEvent): void {
    const wire = serializeRunEvent(event);
    const index = this.eventCount++;
    this.log.add(index, wire);
    for (const subscriber of this.subscribers) safely(() => subscriber.event(wire, index));
    this.feed.publish({ kind: 'run_event', run: this.id, event: feedRunEvent(wire) });
    // The root's reply carries its running total, sub-runs' spend included.
    if (event.type === 'message_completed' && event.runId === this.id) Object.assign(this.liveUsage, event.usage);
    if (event.runId !== this.id) return;
    if (event.type === 'run_completed') {
      this.usage = event.usage;
      this.turns = event.turns;
      this.finish('completed', event.output, undefined);
    } else if (event.type === 'run_suspended') {
      this.usage = event.usage;
      this.turns = event.turn;
      this.finish('suspended', undefined, undefined);
    } else if (event.type === 'run_failed') {
      this.usage = event.usage;
      this.turns = event.turns;
      const error = errorToWire(event.error);
      this.finish(error.code === 'RUN_CANCELLED' ? 'cancelled' : 'failed', undefined, error);
    }
  }

  private finish(status: RunStatus, output: string | undefined, error: WireError | undefined): void {
    this.status = status;
    this.endedAt = Date.now();
    this.output = output;
    this.error = error;
    this.publishRun(this.feed.isInspecting(this.id));
  }

  /**
   * Keeps the consumer at this event until the call is decided, times out, or is decided by
   * the run itself. Calls waiting behind it (their events are still buffered) are tracked
   * as they open (`approvals.onOpened`), so the API and the feed see every waiting call.
   */
  private async hold(event: ApprovalRequiredEvent): Promise<void> {
    this.sync();
    const hold = this.holds.get(event.approvalId);
    if (!hold) return; // decided before the consumer got here
    await hold.done;
  }

  /** Starts tracking every call the runtime lists as waiting that is not tracked yet; returns that list. */
  private sync(): PendingApproval[] {
    const waiting = this.handle.approvals.pending();
    for (const approval of waiting) if (!this.holds.has(approval.approvalId)) this.track(approval);
    return waiting;
  }

  private track(approval: PendingApproval): void {
    const { approvalId } = approval;
    const since = approval.requestedAt;
    const timed = Number.isFinite(this.approvalTimeoutMs);
    const deadline = timed ? since + this.approvalTimeoutMs : undefined;
    const view: PendingApprovalView = {
      approvalId,
      runId: approval.runId,
      callId: approval.callId,
      tool: approval.tool,
      args: sanitize(approval.args, RUN_EVENT_LIMITS),
      path: approval.path,
      agent: approval.agent,
      since,
      deadline,
    };
    let resolve!: (state: ApprovalState) => void;
    const done = new Promise<ApprovalState>((r) => (resolve = r));
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (state: ApprovalState, decidedBy: ApprovalDecider, reason?: string): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      this.holds.delete(approvalId);
      this.publishApproval(view, state, decidedBy, reason);
      resolve(state);
    };
    this.holds.set(approvalId, { view, done, finish });
    this.publishApproval(view, 'pending');
    if (deadline !== undefined) {
      // Measured from when the runtime opened it, also for a call found waiting later.
      timer = setTimeout(() => {
        if (this.handle.approvals.reject(approvalId)) finish('timed_out', 'timeout');
      }, Math.max(0, deadline - Date.now()));
    }
    // Cancellation, an aborted sub-run or a runtime timeout decide without us: notice it.
    void this.handle.approvals.settled(approvalId).then((approved) => finish(approved === true ? 'approved' : 'cancelled', 'run'));
  }

  /** Finishes holds whose call the run has already decided (e.g. right after a cancel). */
  private settleDecidedHolds(state: ApprovalState): void {
    const waiting = new Set(this.handle.approvals.pending().map((approval) => approval.approvalId));
    for (const [approvalId, hold] of [...this.holds]) if (!waiting.has(approvalId)) hold.finish(state, 'run');
  }

  private publishApproval(view: PendingApprovalView, state: ApprovalState, decidedBy?: ApprovalDecider, reason?: string): void {
    this.feed.publish({
      kind: 'approval',
      run: this.id,
      approvalId: view.approvalId,
      runId: view.runId,
      callId: view.callId,
      tool: view.tool,
      args: view.args,
      path: view.path,
      state,
      since: view.since,
      ...(view.deadline !== undefined ? { deadline: view.deadline } : {}),
      ...(decidedBy ? { decidedBy } : {}),
      ...(reason ? { reason } : {}),
    });
  }

  private publishRun(inspected: boolean): void {
    this.feed.publish({
      kind: 'run',
      run: this.id,
      agent: this.agentName,
      input: this.input.length > 2_000 ? `${this.input.slice(0, 2_000)}…` : this.input,
      status: this.status,
      startedAt: this.startedAt,
      ...(this.endedAt !== undefined ? { endedAt: this.endedAt } : {}),
      ...(this.output !== undefined ? { output: this.output.length > 2_000 ? `${this.output.slice(0, 2_000)}…` : this.output } : {}),
      ...(this.error ? { error: this.error } : {}),
      inspected,
    });
  }
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // a broken subscriber must not stop the run's consumer
  }
}
