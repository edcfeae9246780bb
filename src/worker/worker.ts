/**
 * A worker process's loop: take runs from a PostgreSQL store (`claimBatch`: as many as it has
 * free slots in one transaction, SKIP LOCKED),
 * start or resume each under the worker's lease (the run's log renews it while the run works
 * and releases it when the run ends). A worker that stops renewing (killed, hung, cut off)
 * loses its runs when their leases expire, and another worker resumes them from their logs;
 * its late writes are refused by the fence. With a bus, idle workers wake on NOTIFY instead of
 * waiting for their next poll, runs publish their events, and messages sent to a run
 * (approvals, cancel, steer) reach it on whichever worker owns it.
 */
import { hostname } from 'node:os';
import { nanoid } from 'nanoid';
import type { Agent } from '../agent.js';
import { UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import { InspectionFeed } from '../inspect/feed.js';
import type { ClaimedRun } from '../store/postgres-queue.js';
import type { RunBus } from '../store/run-bus.js';

import type { LeasingStore } from './owned-store.js';
import { checkPruning, startPruning, type EventPruner, type EventPruning } from './event-pruning.js';
import { runClaimed, type LiveRun } from './worker-run.js';

/** The store a worker needs: leases plus `claimBatch` (PostgresCheckpointStore): up to `max` runs in one claim, all or none leased. */
export type WorkerStore = LeasingStore & { claimBatch(owner: string, ttlMs: number, max: number): Promise<ClaimedRun[]> };

export interface WorkerOptions {
  readonly store: WorkerStore;
  /**
   * The cluster channel (PostgresRunBus on the same database): without it the worker only
   * polls, and its runs neither publish events nor receive messages from server nodes.
   */
  readonly bus?: RunBus;
  /** Agents by the names runs are enqueued with: an Agent, or a factory called per run. */
  readonly agents: Readonly<Record<string, Agent | (() => Agent)>>;
  /** Runs at once (default 4). */
  readonly concurrency?: number;
  /** Lease holder name (default `worker:<host>:<pid>:<nonce>`). */
  readonly owner?: string;
  /** Lease time; renewed every third of it while a run works (default 30000 ms). */
  readonly leaseTtlMs?: number;
  /** Wait between polls when there is no work (default 1000 ms; with a bus, a notice ends the wait early). */
  readonly pollMs?: number;
  /** Undecided approvals are denied after this long (default Infinity: they wait for a message). */
  readonly approvalTimeoutMs?: number;
  /**
   * Park a run that waits only on approvals (stored as suspended, lease released, the worker's
   * slot freed) instead of holding it; a decision sent later makes any worker resume it.
   * For approvals that may take hours or days. Default false.
   */
  readonly suspendOnWait?: boolean;
  /**
   * Prune the stored events of finished runs (as `troupe db prune` does) when the worker starts
   * and then every `every` (default '1h'): e.g. `{ olderThan: '7d', every: '1h' }`. Needs `bus`.
   * Safe when every worker does it; run logs are never pruned.
   */
  readonly pruneEvents?: EventPruning;
  /** One line per run start, end and problem. */
  readonly log?: (line: string) => void;
}

export interface Worker {
  readonly owner: string;
  /** Runs this worker finished (any outcome), by id, in finishing order. */
  readonly finished: readonly string[];
  /** Resolves once the worker listens for notices (at once without a bus; retried until it works). */
  readonly listening: Promise<void>;
  /**
   * Stops taking runs and resolves once the runs in progress have ended. Runs waiting for a
   * decision are parked (suspended, lease released) at their wait, so stopping never waits for
   * a human; any worker resumes them once decided.
   */
  stop(): Promise<void>;
}

/** Starts the loop at once. @throws UserError for bad options. */
const WORKER_OPTION_KEYS = optionKeys<WorkerOptions>({
  store: true,
  bus: true,
  agents: true,
  concurrency: true,
  owner: true,
  leaseTtlMs: true,
  pollMs: true,
  approvalTimeoutMs: true,
  suspendOnWait: true,
  pruneEvents: true,
  log: true,
});

export function startWorker(options: WorkerOptions): Worker {
  checkOptionKeys(options, WORKER_OPTION_KEYS, 'worker');
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new UserError(`A worker's concurrency must be a positive integer, got ${String(concurrency)}.`);
  if (Object.keys(options.agents).length === 0) throw new UserError('A worker needs at least one agent.');
  const owner = options.owner ?? `worker:${hostname()}:${process.pid}:${nanoid(8)}`;
  const ttl = options.leaseTtlMs ?? 30_000;
  const pollMs = options.pollMs ?? 1000;
  const log = options.log ?? (() => {});
  const { bus } = options;
  const pruning = options.pruneEvents === undefined ? undefined : checkPruning(options.pruneEvents, bus);
  const running = new Set<Promise<void>>();
  const live = new Map<string, LiveRun>();
  const finished: string[] = [];
  let stopping = false;
  let wake: (() => void) | undefined;
  /** A notice came while the loop was busy: claim again before sleeping. */
  let noticed = false;
  let unlisten: (() => Promise<void>) | undefined;
  const context = {
    store: options.store,
    bus,
    owner,
    leaseTtlMs: ttl,
    approvalTimeoutMs: options.approvalTimeoutMs ?? Infinity,
    suspendOnWait: options.suspendOnWait ?? false,
    // Runs publish to the bus, not to an inspector; the feed only satisfies ServerRun (and keeps next to nothing).
    feed: new InspectionFeed({ mode: 'off', maxRuns: 1, maxRecordsPerRun: 1 }),
    log,
  };

  const notice = (): void => {
    noticed = true;
    wake?.();
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (noticed || stopping) return resolve();
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  async function listen(): Promise<void> {
    if (!bus) return;
    for (;;) {
      try {
        unlisten = await bus.listen({
          work: notice,
          message: (runId) => void live.get(runId)?.applier?.poke(),
          // Notices sent while the connection was down are gone: look at everything again.
          reconnected: () => {
            notice();
            for (const { applier } of live.values()) void applier?.poke();
          },
        });
        if (stopping) await unlisten();
        return;
      } catch (error) {
        if (stopping) return;
        log(`listening for notices failed (${(error as Error).message}); polling every ${pollMs} ms meanwhile`);
        await new Promise((resolve) => setTimeout(resolve, Math.max(pollMs, 1000)));
        if (stopping) return;
      }
    }
  }

  async function execute(claimed: ClaimedRun): Promise<void> {
    const source = options.agents[claimed.agent];
    if (!source) {
      // Keep the lease until it expires: a worker that has this agent can take the run then.
      log(`run ${claimed.runId}: agent '${claimed.agent}' is not in this worker's agents (${Object.keys(options.agents).join(', ')}); left for another worker`);
      return;
    }
    let outcome: Awaited<ReturnType<typeof runClaimed>> | undefined;
    try {
      const agent = typeof source === 'function' ? source() : source;
      log(`run ${claimed.runId}: ${claimed.input === undefined ? 'resuming' : 'starting'} on ${agent.name}`);
      outcome = await runClaimed(claimed, agent, context, live);
      log(`run ${claimed.runId}: ${outcome.detail}`);
    } catch (error) {
      // It could not start (agent factory threw, database gone): the lease is kept until it runs
      // out, so the run is retried then, not claimed again at once in a tight loop.
      log(`run ${claimed.runId}: could not run (${(error as Error).message}); retried once its lease runs out (${ttl} ms)`);
    }
    if (outcome) await Promise.resolve(options.store.release(claimed.runId, owner)).catch(() => {});
    finished.push(claimed.runId);
    // A parked run may have been sent something meanwhile: look for work before sleeping.
    if (outcome?.status === 'suspended') notice();
    wake?.();
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      if (running.size >= concurrency) {
        await Promise.race(running);
        continue;
      }
      noticed = false;
      let claimed: ClaimedRun[] = [];
      try {
        // Every free slot in one claim: one transaction instead of one per run when a burst arrives.
        claimed = await options.store.claimBatch(owner, ttl, concurrency - running.size);
      } catch (error) {
        log(`claiming failed: ${(error as Error).message}`);
      }
      if (claimed.length === 0) {
        if (!stopping) await sleep(pollMs);
        continue;
      }
      for (const run of claimed) {
        const task = execute(run).catch((error: unknown) => log(`run ${run.runId}: ${(error as Error).message}`));
        running.add(task);
        void task.finally(() => running.delete(task));
      }
    }
  }

  const listening = listen();
  const looping = loop();
  const stopPruning = pruning && startPruning(bus as unknown as EventPruner, pruning, log);
  return {
    owner,
    finished,
    listening,
    async stop() {
      stopping = true;
      wake?.();
      await stopPruning?.();
      await looping;
      for (const { run } of live.values()) {
        try {
          run.handle.suspend();
        } catch {
          // Ended meanwhile.
        }
      }
      await Promise.all(running);
      await listening;
      await unlisten?.();
    },
  };
}
