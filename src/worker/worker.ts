/**
 * A worker process's loop: take runs from a PostgreSQL store (`claimNext`, SKIP LOCKED),
 * start or resume each with `Runner.stream` under the worker's lease, renew the lease while
 * the run works, release it when the run ends. A worker that stops renewing (killed, hung,
 * cut off) loses its runs when their leases expire, and another worker resumes them from
 * their logs; its late writes are refused by the fence.
 */
import { hostname } from 'node:os';
import { nanoid } from 'nanoid';
import type { Agent } from '../agent.js';
import { RunCancelled, RunLocked, UserError } from '../errors.js';
import { Runner } from '../runtime/runner.js';
import type { ClaimedRun } from '../store/postgres-queue.js';
import { ownedStore, type LeasingStore } from './owned-store.js';

/** The store a worker needs: leases plus `claimNext` (PostgresCheckpointStore). */
export type WorkerStore = LeasingStore & { claimNext(owner: string, ttlMs: number): Promise<ClaimedRun | undefined> };

export interface WorkerOptions {
  readonly store: WorkerStore;
  /** Agents by the names runs are enqueued with: an Agent, or a factory called per run. */
  readonly agents: Readonly<Record<string, Agent | (() => Agent)>>;
  /** Runs at once (default 4). */
  readonly concurrency?: number;
  /** Lease holder name (default `worker:<host>:<pid>:<nonce>`). */
  readonly owner?: string;
  /** Lease time; renewed every third of it while a run works (default 30000 ms). */
  readonly leaseTtlMs?: number;
  /** Wait between polls when there is no work (default 1000 ms). */
  readonly pollMs?: number;
  /** One line per run start, end and problem. */
  readonly log?: (line: string) => void;
}

export interface Worker {
  readonly owner: string;
  /** Runs this worker finished (any outcome), by id, in finishing order. */
  readonly finished: readonly string[];
  /** Stops taking runs and resolves once the runs in progress have ended. */
  stop(): Promise<void>;
}

/** Starts the loop at once. @throws UserError for bad options. */
export function startWorker(options: WorkerOptions): Worker {
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new UserError(`A worker's concurrency must be a positive integer, got ${String(concurrency)}.`);
  if (Object.keys(options.agents).length === 0) throw new UserError('A worker needs at least one agent.');
  const owner = options.owner ?? `worker:${hostname()}:${process.pid}:${nanoid(8)}`;
  const ttl = options.leaseTtlMs ?? 30_000;
  const pollMs = options.pollMs ?? 1000;
  const log = options.log ?? (() => {});
  const running = new Set<Promise<void>>();
  const finished: string[] = [];
  let stopping = false;
  let wake: (() => void) | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  async function execute(claimed: ClaimedRun): Promise<void> {
    const source = options.agents[claimed.agent];
    if (!source) {
      // Keep the lease until it expires: a worker that has this agent can take the run then.
      log(`run ${claimed.runId}: agent '${claimed.agent}' is not in this worker's agents (${Object.keys(options.agents).join(', ')}); left for another worker`);
      return;
    }
    const controller = new AbortController();
    const renewal = setInterval(() => {
      Promise.resolve()
        .then(() => options.store.renew(claimed.runId, owner, ttl))
        .then(undefined, (error: unknown) => {
        if (error instanceof RunLocked) controller.abort(new RunCancelled(`lease lost: ${error.message}`));
        else log(`run ${claimed.runId}: lease renewal failed (${(error as Error).message}); retrying`);
      });
    }, Math.max(1, Math.floor(ttl / 3)));
    try {
      const agent = typeof source === 'function' ? source() : source;
      log(`run ${claimed.runId}: ${claimed.input === undefined ? 'resuming' : 'starting'} on ${agent.name}`);
      const handle = Runner.stream(agent, claimed.input ?? '', {
        runId: claimed.runId,
        // The run renews the worker's lease with the worker's lease time (its claim acts for the worker).
        checkpoint: { store: ownedStore(options.store, owner), runId: claimed.runId, ifRunExists: 'resume', leaseMs: ttl },
        signal: controller.signal,
      });
      const outcome = await handle.result().then(
        (result) => `completed: ${result.output}`,
        (error: unknown) => `failed: ${(error as Error).name}: ${(error as Error).message}`,
      );
      log(`run ${claimed.runId}: ${outcome}`);
    } finally {
      clearInterval(renewal);
      await Promise.resolve(options.store.release(claimed.runId, owner)).catch(() => {});
      finished.push(claimed.runId);
      wake?.();
    }
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      if (running.size >= concurrency) {
        await Promise.race(running);
        continue;
      }
      let claimed: ClaimedRun | undefined;
      try {
        claimed = await options.store.claimNext(owner, ttl);
      } catch (error) {
        log(`claiming failed: ${(error as Error).message}`);
      }
      if (!claimed) {
        if (!stopping) await sleep(pollMs);
        continue;
      }
      const task = execute(claimed).catch((error: unknown) => log(`run ${claimed.runId}: ${(error as Error).message}`));
      running.add(task);
      void task.finally(() => running.delete(task));
    }
  }

  const looping = loop();
  return {
    owner,
    finished,
    async stop() {
      stopping = true;
      wake?.();
      await looping;
      await Promise.all(running);
    },
  };
}
