/**
 * PostgreSQL as the run queue: `troupe_jobs` holds enqueued runs (how to start them), and
 * workers take work with `FOR UPDATE SKIP LOCKED`, so concurrent workers never wait on each
 * other or take the same run. A job row stays after its run starts: it names the agent the
 * run was started with (the head names the agent it is on now, after handoffs).
 */
import { UserError } from '../errors.js';
import type { RunInputValue } from '../types.js';
import { checkRunId, type Lease } from './checkpoint-store.js';
import { CHECKPOINT_SCHEMA_VERSION, decodeJson } from './format.js';
import type { PostgresDatabase, Query } from './postgres.js';
import { inSchema } from './postgres-layout.js';
import { channelFor } from './postgres-listener.js';

/** A run for a worker: enqueued and not started yet (`input` set), or stored and needing a process. */
export interface ClaimedRun {
  readonly runId: string;
  readonly lease: Lease;
  /** The agent to start or resume the run with (from its job when it was enqueued, else the head's). */
  readonly agent: string;
  /** Set for a run that has not started yet: start it with this input. */
  readonly input?: RunInputValue;
}

/** What `enqueueRun` stores. */
export interface RunJob {
  readonly runId: string;
  /** The agent's name, as the worker's agents module exports it. */
  readonly agent: string;
  readonly input: RunInputValue;
}

type TakeLease = (q: Query, runId: string, now: number) => Promise<Lease | undefined>;

/**
 * @internal On a run's first append: its job (if it was enqueued) is started, so claims no
 * longer look at it (the partial index `troupe_jobs_waiting` holds only jobs not started).
 */
export async function markJobStarted(db: PostgresDatabase, q: Query, runId: string, now: number): Promise<void> {
  await q(inSchema('UPDATE {s}.troupe_jobs SET started_at = $2 WHERE run_id = $1 AND started_at IS NULL', db.s), [runId, now]);
}

/** @internal The store's `enqueue`: one transaction under the run's writer lock. */
export async function insertJob(db: PostgresDatabase, q: Query, job: RunJob, now: number): Promise<void> {
  const existing = await q(
    inSchema('SELECT 1 FROM {s}.troupe_runs WHERE run_id = $1 UNION ALL SELECT 1 FROM {s}.troupe_jobs WHERE run_id = $1', db.s),
    [job.runId],
  );
  if (existing.length > 0) throw new UserError(`Cannot enqueue run '${job.runId}': a run with that id is already stored or enqueued; use a new run id.`);
  await q(inSchema('INSERT INTO {s}.troupe_jobs (run_id, agent, input, enqueued_at) VALUES ($1, $2, $3, $4)', db.s), [job.runId, job.agent, JSON.stringify(job.input), now]);
  // Delivered on commit: idle workers claim at once instead of at their next poll.
  await q('SELECT pg_notify($1, $2)', [channelFor(db.schema, 'work'), job.runId]);
}

/** @throws UserError for a job that cannot be one (checked before anything is written). */
export function checkJob(job: RunJob): void {
  if (typeof job !== 'object' || job === null) throw new UserError(`enqueueRun needs { runId, agent, input }, got ${JSON.stringify(job)}.`);
  checkRunId(job.runId);
  if (typeof job.agent !== 'string' || job.agent.length === 0) throw new UserError(`Cannot enqueue run '${job.runId}': agent must be a non-empty agent name, got ${JSON.stringify(job.agent)}.`);
  checkInput(job.input, () => `Cannot enqueue run '${job.runId}': input`);
}

function checkInput(input: unknown, where: () => string): asserts input is RunInputValue {
  if (typeof input === 'string') return;
  const ok = Array.isArray(input) && input.length > 0 && input.every((m) => typeof m === 'object' && m !== null && typeof (m as { role?: unknown }).role === 'string');
  if (!ok) throw new UserError(`${where()} must be a string or a non-empty array of messages.`);
}

/** Rows locked per claim beyond the runs it may take: spares for a candidate whose lease turns out to be taken meanwhile. */
const SPARE_CANDIDATES = 7;

/**
 * @internal The store's `claimNext` / `claimBatch`: up to `max` runs in one transaction. First
 * stored root runs that need a process (oldest first: running ones whose owner is gone;
 * suspended ones with a decision or a wait resolution stored since they parked, an unapplied
 * message, or a wait deadline (`wake_at`) now due; sub-runs are resumed by their parent),
 * then enqueued runs not started yet (in enqueue order); each candidate row is locked with
 * SKIP LOCKED and leased with the claim statement. The only lock it waits for is a lease row,
 * and an append locks its run's head and job rows before its lease (the store's lock order),
 * so a claim skips a run being written rather than deadlocking with its writer; a lease row it
 * waits for is never held by a transaction that waits for a row this claim locked (that
 * transaction locked the run's head or job row first, so this claim skipped the run). All or
 * nothing: an error (a corrupt job, a lost connection) rolls back every lease it took.
 */
export async function claimRuns(db: PostgresDatabase, q: Query, now: number, max: number, takeLease: TakeLease): Promise<ClaimedRun[]> {
  const claimed: ClaimedRun[] = [];
  const stored = await q<{ run_id: string; agent: string; job_agent: string | null }>(
    inSchema(
      `SELECT r.run_id, r.agent, j.agent AS job_agent FROM {s}.troupe_runs r LEFT JOIN {s}.troupe_jobs j ON j.run_id = r.run_id
        WHERE r.schema_version <= $2
          AND position('/' in r.run_id) = 0
          AND (r.status = 'running' OR (r.status = 'suspended' AND (r.wake_at <= $1 OR EXISTS (
            SELECT 1 FROM {s}.troupe_entries e WHERE e.run_id = r.run_id AND e.seq > r.suspended_count AND e.kind IN ('approval_decision', 'wait_resolution'))
            OR EXISTS (SELECT 1 FROM {s}.troupe_messages m WHERE m.run_id = r.run_id AND m.applied_at IS NULL))))
          AND NOT EXISTS (SELECT 1 FROM {s}.troupe_leases l WHERE l.run_id = r.run_id AND l.expires_at > $1)
        ORDER BY r.position
        LIMIT $3
        FOR UPDATE OF r SKIP LOCKED`,
      db.s,
    ),
    [now, CHECKPOINT_SCHEMA_VERSION, max + SPARE_CANDIDATES],
  );
  for (const row of stored) {
    if (claimed.length === max) return claimed;
    const lease = await takeLease(q, row.run_id, now);
    if (lease) claimed.push({ runId: row.run_id, lease, agent: row.job_agent ?? row.agent });
  }
  if (claimed.length === max) return claimed;
  const queued = await q<{ run_id: string; agent: string; input: unknown }>(
    inSchema(
      `SELECT j.run_id, j.agent, j.input FROM {s}.troupe_jobs j
        WHERE j.started_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM {s}.troupe_runs r WHERE r.run_id = j.run_id)
          AND NOT EXISTS (SELECT 1 FROM {s}.troupe_leases l WHERE l.run_id = j.run_id AND l.expires_at > $1)
        ORDER BY j.position
        LIMIT $2
        FOR UPDATE OF j SKIP LOCKED`,
      db.s,
    ),
    [now, max - claimed.length + SPARE_CANDIDATES],
  );
  for (const row of queued) {
    if (claimed.length === max) return claimed;
    const where = `${db.where}: job '${row.run_id}'`;
    const input = decodeJson(row.input, `${where} input`);
    checkInput(input, () => `${where} is corrupt: its input`);
    const lease = await takeLease(q, row.run_id, now);
    if (lease) claimed.push({ runId: row.run_id, lease, agent: row.agent, input });
  }
  return claimed;
}

/**
 * Queues a run for `troupe worker` processes on the same database: a worker takes it with
 * `claimNext`, starts `agent` on `input` under `runId`, and checkpoints it to `store`.
 * @throws UserError when `runId` is already stored or enqueued (nothing written); StoreUnavailable.
 */
export async function enqueueRun(store: { enqueue(job: RunJob): Promise<void> }, job: RunJob): Promise<void> {
  await store.enqueue(job);
}
