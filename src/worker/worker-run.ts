import type { Agent } from '../agent.js';
import type { InspectionFeed } from '../inspect/feed.js';
import type { WireRunEvent } from '../inspect/wire.js';
import { ServerRun } from '../server/runs.js';
import type { ClaimedRun } from '../store/postgres-queue.js';
import type { RunBus, StoredRunMessage } from '../store/run-bus.js';
import { EventPublisher } from './event-publisher.js';
import { MessageApplier, recordSentDecisions } from './message-applier.js';
import { ownedStore, type LeasingStore } from './owned-store.js';

/** What one claimed run needs from its worker. */
export interface WorkerRunContext {
  readonly store: LeasingStore;
  readonly bus: RunBus | undefined;
  readonly owner: string;
  readonly leaseTtlMs: number;
  readonly approvalTimeoutMs: number;
  readonly suspendOnWait: boolean;
  readonly feed: InspectionFeed;
  readonly log: (line: string) => void;
}

/** A run in progress on this worker: messages are applied through `applier` (with a bus). */
export interface LiveRun {
  readonly run: ServerRun;
  readonly applier: MessageApplier | undefined;
}

/** How a worker's run ended, for its log line and the loop. */
export interface WorkerRunOutcome {
  readonly status: ServerRun['status'];
  readonly detail: string;
}

/** Events kept in the worker's memory per run (the bus holds them all). */
const KEPT_EVENTS = 200;
const KEPT_EVENT_BYTES = 256 * 1024;

/**
 * A run this worker claimed ends here with its lease lost or its database gone: it is not over
 * (another worker, or this one once the database is back, resumes it from its log), so the
 * stream must not tell watchers it failed.
 */
function endsElsewhere(event: WireRunEvent, runId: string): boolean {
  if (event.type !== 'run_failed' || event.runId !== runId) return false;
  const code = (event as { error?: { code?: unknown } }).error?.code;
  return code === 'RUN_LOCKED' || code === 'STORE_UNAVAILABLE';
}

/**
 * Runs one claimed run to its end as a ServerRun (the same approval holds, cancel and steer as
 * the HTTP server), writing as the worker through `ownedStore`. With a bus: its events are
 * published, messages sent to it are applied (those sent before it started first: a cancel
 * stops it before its first model request), and it is poked to apply them again on every
 * notice and every wait it opens (`approval_required`, `wait_opened`, `human_request`).
 */
export async function runClaimed(claimed: ClaimedRun, agent: Agent, context: WorkerRunContext, live: Map<string, LiveRun>): Promise<WorkerRunOutcome> {
  const { bus, store, owner } = context;
  const runId = claimed.runId;
  const initial: StoredRunMessage[] = bus ? await bus.messages(runId) : [];
  // Steers this run's log already holds (it ran before, elsewhere): applied there, not again.
  const logged = new Set<string>();
  if (claimed.input === undefined && initial.some((m) => m.message.kind === 'steer')) {
    for (const entry of (await store.load(runId))?.entries ?? []) if (entry.kind === 'input' && entry.id !== undefined) logged.add(entry.id);
  }
  // Decisions sent while no process held the run go into its log first (the owner writes its log).
  const settled = bus && claimed.input === undefined ? await recordSentDecisions(store, owner, context.leaseTtlMs, runId, initial, context.log) : [];
  const input = typeof claimed.input === 'string' ? claimed.input : '';
  const run = new ServerRun({
    agentName: claimed.agent,
    agent,
    input,
    ...(claimed.input === undefined ? { resumeId: runId } : { runId }),
    ...(Array.isArray(claimed.input) ? { messages: claimed.input } : {}),
    // The run times its approvals out itself: the deadline is then in its log (approval_request
    // `deadline`), so a parked run is woken for it (wake_at) by whichever worker polls then.
    runOptions: Number.isFinite(context.approvalTimeoutMs) ? { approvalTimeoutMs: context.approvalTimeoutMs } : {},
    approvalTimeoutMs: Infinity,
    feed: context.feed,
    maxEvents: KEPT_EVENTS,
    maxEventBytes: KEPT_EVENT_BYTES,
    checkpointStore: ownedStore(store, owner),
    leaseMs: context.leaseTtlMs,
    suspendOnWait: context.suspendOnWait,
  });
  const publisher = bus ? new EventPublisher(bus, runId, context.log) : undefined;
  const applier = bus ? new MessageApplier(bus, store, run, logged, context.log) : undefined;
  live.set(runId, { run, applier });
  applier?.applyAtStart(initial, settled);
  const unsubscribe = run.subscribe({
    event: (event) => {
      if (endsElsewhere(event, runId)) return;
      publisher?.push(event);
      // A call started waiting: a message sent for it (decision, signal, answer) may apply now.
      if (event.type === 'approval_required' || event.type === 'wait_opened' || event.type === 'human_request') void applier?.poke();
    },
    end: () => undefined,
  });
  try {
    await run.done;
    // The stream can end before the run's last head is stored; the result waits for the log to close.
    await run.handle.result().catch(() => undefined);
  } finally {
    unsubscribe();
    live.delete(runId);
  }
  await publisher?.flush();
  if (bus && applier) {
    if (run.status === 'suspended') await applier.settleStale().catch((error: unknown) => context.log(`run ${runId}: checking its messages after parking failed (${(error as Error).message})`));
    else await bus.clearFinished(runId).catch((error: unknown) => context.log(`run ${runId}: clearing its messages failed (${(error as Error).message})`));
  }
  const detail = run.status === 'completed' ? `completed: ${run.output ?? ''}` : run.error ? `${run.status}: ${run.error.name}: ${run.error.message}` : run.status;
  return { status: run.status, detail };
}
