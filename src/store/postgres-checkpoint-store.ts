import { StoreUnavailable, UserError } from '../errors.js';
import {
  checkFence,
  checkLeaseRequest,
  checkLeaseTerms,
  checkRunId,
  lostLease,
  statusFilter,
  type AppendFence,
  type AppendRequest,
  type CheckpointEntry,
  type CheckpointHead,
  type CheckpointStore,
  type ClaimOptions,
  type Lease,
  type ListRunsOptions,
  type RunStatus,
  type RunSummary,
  type StoredRun,
} from './checkpoint-store.js';
import { STORED_RUN_STATUSES, fromStoredStatus, storedStatusesToMatch, type StoredRunStatus } from '../run-status.js';
import { CHECKPOINT_SCHEMA_VERSION, checkEntries, checkHead, checkSchemaVersion, decodeEntry, decodeHead, decodeJson } from './format.js';
import { PostgresDatabase, type Query } from './postgres.js';
import { OPEN_WAIT_DEADLINE, POSTGRES_CHECKPOINTS, inSchema } from './postgres-layout.js';
import { checkJob, claimRuns, insertJob, markJobStarted, type ClaimedRun, type RunJob } from './postgres-queue.js';
import type { PostgresConnection, PostgresStoreOptions } from './postgres-options.js';

interface RunRow {
  run_id: string;
  schema_version: unknown;
  agent: unknown;
  turn: unknown;
  status: unknown;
  usage: unknown;
  output: unknown;
  error: unknown;
  entry_count: number;
  created_at: string;
  updated_at: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
}

const RUN_COLUMNS = `r.run_id, r.schema_version, r.agent, r.turn, r.status, r.usage, r.output, r.error, r.entry_count, r.created_at, r.updated_at,
  l.owner AS lease_owner, l.expires_at AS lease_expires_at`;

/**
 * Checkpoint store on PostgreSQL (`pg` pool), for runs shared by many processes. Same contract
 * as the memory and SQLite stores: each `append` is one transaction (entries inserted after
 * the stored ones, head upserted, stored entries never rewritten); writes of one run are
 * serialised by a transaction-scoped advisory lock; leases live in their own table and fenced
 * appends lock the lease row. Reads check every record and throw a UserError naming the first
 * bad one. The tables must exist: `troupe db migrate` creates them, the store never does.
 *
 * Lock order: every transaction that locks more than one of a run's rows takes them in this
 * order, so two of them never wait for each other (PostgreSQL would abort one: "deadlock
 * detected"): the run's writer lock (advisory), its `troupe_runs` row, its `troupe_jobs` row,
 * its `troupe_leases` row, then its `troupe_messages`, `troupe_events` and `troupe_entries`
 * rows; several runs in run id order. `claimNext` locks runs and jobs rows with SKIP LOCKED
 * (it never waits for them) and only then their lease, so a claim skips a run an append is
 * writing instead of waiting for it.
 *
 * Every method may throw StoreUnavailable (connection refused or lost, wrong credentials,
 * missing database; nothing written unless its `outcome` says 'unknown') and UserError (tables
 * missing or of another layout version, a closed store, bad input).
 */
export class PostgresCheckpointStore implements CheckpointStore {
  private readonly db: PostgresDatabase;
  private readonly now: () => number;

  /** `connection`: a `postgres://` URL or pool options. Connects on first use. */
  constructor(connection: PostgresConnection, options: PostgresStoreOptions = {}) {
    this.db = new PostgresDatabase(connection, POSTGRES_CHECKPOINTS.label, POSTGRES_CHECKPOINTS, options);
    this.now = options.now ?? Date.now;
  }

  /** Names the store in messages: URL without password, and schema. */
  get where(): string {
    return this.db.where;
  }

  async append(runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead, fence?: AppendFence): Promise<void> {
    checkRunId(runId);
    checkEntries(entries, `run '${runId}'`);
    checkHead(head, `run '${runId}'`);
    await this.db.transaction((q) => this.write(q, { runId, entries, head, ...(fence ? { fence } : {}) }));
  }

  /**
   * Group commit: every request in one transaction, each under its own savepoint, so a
   * refused request (fence, newer schema, invalid entry) writes nothing and the others still
   * commit. Returns each request's error, or undefined when it was stored.
   * @throws StoreUnavailable when the transaction itself fails (then nothing was written).
   */
  async appendBatch(requests: readonly AppendRequest[]): Promise<(Error | undefined)[]> {
    const results = requests.map((r): Error | undefined => {
      try {
        checkRunId(r.runId);
        checkEntries(r.entries, `run '${r.runId}'`);
        checkHead(r.head, `run '${r.runId}'`);
        return undefined;
      } catch (error) {
        return error as Error;
      }
    });
    if (results.every((error) => error !== undefined)) return results;
    // Runs in id order (the lock order), so two batches naming the same runs never hold one each and
    // wait for the other; a run's own requests keep their order (the sort is stable).
    const order = requests.map((_, i) => i).sort((a, b) => compareIds(requests[a]!.runId, requests[b]!.runId));
    await this.db.transaction(async (q) => {
      for (const i of order) {
        const request = requests[i]!;
        if (results[i] !== undefined) continue;
        await q('SAVEPOINT troupe_append');
        try {
          await this.write(q, request);
          await q('RELEASE SAVEPOINT troupe_append');
        } catch (error) {
          // A lost connection ends the whole transaction; anything else refuses this request alone.
          if (error instanceof StoreUnavailable) throw error;
          await q('ROLLBACK TO SAVEPOINT troupe_append');
          results[i] = error instanceof Error ? error : new Error(String(error));
        }
      }
    });
    return results;
  }

  async load(runId: string): Promise<StoredRun | undefined> {
    // One snapshot: the head, the entries and the lease are read as of the same moment.
    return this.db.transaction(async (q) => {
      const rows = await q<RunRow>(this.sql(`SELECT ${RUN_COLUMNS} FROM {s}.troupe_runs r LEFT JOIN {s}.troupe_leases l ON l.run_id = r.run_id WHERE r.run_id = $1`), [runId]);
      const row = rows[0];
      if (!row) return undefined;
      const where = this.runWhere(runId);
      const schemaVersion = checkSchemaVersion(row.schema_version, CHECKPOINT_SCHEMA_VERSION, where);
      const head = this.head(row, where, schemaVersion);
      const stored = await q<{ seq: number; kind: unknown; data: unknown }>(this.sql('SELECT seq, kind, data FROM {s}.troupe_entries WHERE run_id = $1 ORDER BY seq'), [runId]);
      const entries: CheckpointEntry[] = [];
      for (const entry of stored) {
        const expected = entries.length + 1;
        if (entry.seq !== expected) throw new UserError(`${where} is corrupt: entry ${expected} is missing (the next stored entry is ${entry.seq}).`);
        entries.push(decodeEntry(entry.data, `${where} entry ${entry.seq}`, schemaVersion, entry.kind));
      }
      if (entries.length !== row.entry_count) throw new UserError(`${where} is corrupt: its head records ${row.entry_count} entries but ${entries.length} are stored.`);
      const lease = leaseOf(row);
      return { entries, head, schemaVersion, ...(lease ? { lease } : {}) };
    }, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  /**
   * Where a run stands without reading its log: its stored status, `queued` for an enqueued run
   * no worker has started yet, undefined when neither is stored.
   */
  async runState(runId: string): Promise<RunStatus | undefined> {
    checkRunId(runId);
    const rows = await this.db.query<{ status: string | null; version: unknown; queued: boolean }>(
      this.sql('SELECT r.status, r.schema_version AS version, EXISTS (SELECT 1 FROM {s}.troupe_jobs WHERE run_id = $1) AS queued FROM (SELECT 1) one LEFT JOIN {s}.troupe_runs r ON r.run_id = $1'),
      [runId],
    );
    const row = rows[0]!;
    if (row.status === null) return row.queued ? 'queued' : undefined;
    const where = this.runWhere(runId);
    const status = fromStoredStatus(row.status, checkSchemaVersion(row.version, CHECKPOINT_SCHEMA_VERSION, where));
    if (!(STORED_RUN_STATUSES as readonly unknown[]).includes(status)) throw new UserError(`${where} head is corrupt: field 'status' must be one of ${STORED_RUN_STATUSES.join(', ')}, got ${JSON.stringify(status)}.`);
    return status as StoredRunStatus;
  }

  /** Enqueued runs no worker has started yet, in enqueue order (`input`: the text of a string input). */
  async listQueued(): Promise<Array<{ runId: string; agent: string; input: string | undefined; enqueuedAt: number }>> {
    const rows = await this.db.query<{ run_id: string; agent: string; input: string; enqueued_at: string }>(
      this.sql('SELECT j.run_id, j.agent, j.input, j.enqueued_at FROM {s}.troupe_jobs j WHERE j.started_at IS NULL AND NOT EXISTS (SELECT 1 FROM {s}.troupe_runs r WHERE r.run_id = j.run_id) ORDER BY j.position'),
    );
    return rows.map((row) => {
      const input = decodeJson(row.input, `${this.db.where}: job '${row.run_id}' input`);
      return { runId: row.run_id, agent: row.agent, input: typeof input === 'string' ? input : undefined, enqueuedAt: Number(row.enqueued_at) };
    });
  }

  /** Runs oldest first (by first append). A status filter is applied by the database, so runs it leaves out are not read. */
  async list(options: ListRunsOptions = {}): Promise<RunSummary[]> {
    const statuses = statusFilter(options);
    if (statuses?.length === 0) return [];
    const filter = statuses ? 'WHERE r.status = ANY($1::text[])' : '';
    const rows = await this.db.query<RunRow>(
      this.sql(`SELECT ${RUN_COLUMNS} FROM {s}.troupe_runs r LEFT JOIN {s}.troupe_leases l ON l.run_id = r.run_id ${filter} ORDER BY r.position`),
      statuses ? [storedStatusesToMatch(statuses)] : [],
    );
    return rows.map((row) => {
      const where = this.runWhere(row.run_id);
      const schemaVersion = checkSchemaVersion(row.schema_version, CHECKPOINT_SCHEMA_VERSION, where);
      const head = this.head(row, where, schemaVersion);
      const lease = leaseOf(row);
      return { runId: row.run_id, schemaVersion, head, entries: row.entry_count, createdAt: Number(row.created_at), updatedAt: Number(row.updated_at), ...(lease ? { lease } : {}) };
    });
  }

  /** Removes the run's entries, head, lease and job in one transaction (reads none of them, so a damaged run goes too); returns whether it existed. */
  async delete(runId: string): Promise<boolean> {
    return this.db.transaction(async (q) => {
      await this.lockRun(q, runId);
      // In the lock order: the head first, so a claim running meanwhile skips the run.
      const existed = (await q(this.sql('DELETE FROM {s}.troupe_runs WHERE run_id = $1 RETURNING run_id'), [runId])).length > 0;
      await q(this.sql('DELETE FROM {s}.troupe_jobs WHERE run_id = $1'), [runId]);
      await q(this.sql('DELETE FROM {s}.troupe_leases WHERE run_id = $1'), [runId]);
      await q(this.sql('DELETE FROM {s}.troupe_messages WHERE run_id = $1'), [runId]);
      await q(this.sql('DELETE FROM {s}.troupe_events WHERE run_id = $1'), [runId]);
      await q(this.sql('DELETE FROM {s}.troupe_entries WHERE run_id = $1'), [runId]);
      return existed;
    });
  }

  /** `INSERT … ON CONFLICT DO UPDATE … WHERE` takes a free, expired, own or taken-over lease in one statement; two claimants are ordered by the row lock. */
  async claim(runId: string, owner: string, ttlMs: number, options: ClaimOptions = {}): Promise<Lease> {
    checkLeaseRequest(runId, owner, ttlMs);
    return this.db.transaction(async (q) => {
      const now = this.now();
      const taken = await this.takeLease(q, runId, owner, now, now + ttlMs, options.takeOverFrom);
      if (taken) return taken;
      const held = await this.heldLease(q, runId);
      throw lostLease(runId, owner, held);
    });
  }

  async renew(runId: string, owner: string, ttlMs: number): Promise<Lease> {
    checkLeaseRequest(runId, owner, ttlMs);
    return this.db.transaction(async (q) => {
      const expiresAt = this.now() + ttlMs;
      const rows = await q(this.sql('UPDATE {s}.troupe_leases SET expires_at = $3 WHERE run_id = $1 AND owner = $2 RETURNING run_id'), [runId, owner, expiresAt]);
      if (rows.length > 0) return { runId, owner, expiresAt };
      throw lostLease(runId, owner, await this.heldLease(q, runId));
    });
  }

  async release(runId: string, owner: string): Promise<void> {
    await this.db.query(this.sql('DELETE FROM {s}.troupe_leases WHERE run_id = $1 AND owner = $2'), [runId, owner]);
  }

  /**
   * For workers: leases the oldest run that needs a process — status `running`, or `suspended`
   * with an approval decision or a wait resolution recorded since it suspended, a message not
   * yet applied, or a wait deadline that is due (a timer's time, a wait's timeout: durable
   * timers) — whose lease is missing or expired;
   * when there is none, the oldest enqueued run (`enqueue`) not started yet. Undefined when
   * there is no work. Candidates are locked with `FOR UPDATE SKIP LOCKED`, so workers polling
   * at once take different runs without waiting on each other.
   */
  async claimNext(owner: string, ttlMs: number): Promise<ClaimedRun | undefined> {
    return (await this.claimBatch(owner, ttlMs, 1))[0];
  }

  /**
   * `claimNext` for up to `max` runs in one transaction (a worker with `max` free slots): the
   * same runs, in the same order, as `max` claims in a row would take, each under its own lease
   * expiring `ttlMs` from now. All or nothing: when it throws, none of them is leased.
   * @throws UserError for a bad owner, TTL or `max` (a positive integer), or a corrupt job; StoreUnavailable.
   */
  async claimBatch(owner: string, ttlMs: number, max: number): Promise<ClaimedRun[]> {
    checkLeaseTerms(owner, ttlMs);
    if (!Number.isInteger(max) || max < 1) throw new UserError(`A claim takes a positive integer number of runs, got ${String(max)}.`);
    return this.db.transaction(async (q) => {
      const now = this.now();
      return claimRuns(this.db, q, now, max, (tq, runId, at) => this.takeLease(tq, runId, owner, at, at + ttlMs));
    });
  }

  /**
   * Queues a run for a worker (`troupe worker`): stored in `troupe_jobs` until a worker's
   * `claimNext` takes it and starts `agent` on `input`; nothing of the run's log is written.
   * @throws UserError when the run id is already stored or enqueued, or the job is malformed.
   */
  async enqueue(job: RunJob): Promise<void> {
    checkJob(job);
    await this.db.transaction(async (q) => {
      await this.lockRun(q, job.runId);
      await insertJob(this.db, q, job, this.now());
    });
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  /** One append inside the caller's transaction: the same checks, in the same order, as SQLite. */
  private async write(q: Query, request: AppendRequest): Promise<void> {
    const { runId, entries, head, fence } = request;
    await this.lockRun(q, runId);
    const where = this.runWhere(runId);
    // The lock order: the head row, then the job, then the lease. A claim that already holds the
    // head row (FOR UPDATE SKIP LOCKED) may wait for the lease; locking the lease first here
    // would make each wait for the other (PostgreSQL then aborts one: "deadlock detected").
    const stored = (await q<{ schema_version: unknown; entry_count: number }>(this.sql('SELECT schema_version, entry_count FROM {s}.troupe_runs WHERE run_id = $1 FOR UPDATE'), [runId]))[0];
    // An older-format run is upgraded by appending (its old entries still read); a newer one is refused.
    if (stored) checkSchemaVersion(stored.schema_version, CHECKPOINT_SCHEMA_VERSION, where);
    if (!stored) await markJobStarted(this.db, q, runId, this.now());
    if (fence) {
      const held = (await q<{ owner: string; expires_at: string }>(this.sql('SELECT owner, expires_at FROM {s}.troupe_leases WHERE run_id = $1 FOR UPDATE'), [runId]))[0];
      checkFence(runId, fence, held && { runId, owner: held.owner, expiresAt: Number(held.expires_at) }, stored?.entry_count ?? 0, this.now());
    }
    const before = stored?.entry_count ?? 0;
    const count = before + entries.length;
    // The entries and the head in one statement (a data-modifying CTE runs exactly once).
    await q(
      this.sql(`WITH added AS (
          INSERT INTO {s}.troupe_entries (run_id, seq, kind, data)
          SELECT $1, $2 + t.n, t.kind, t.data FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(kind, data, n)
        )
        INSERT INTO {s}.troupe_runs AS r (run_id, schema_version, agent, turn, status, usage, output, error, entry_count, suspended_count, created_at, updated_at)
        VALUES ($1, $5, $6, $7, $8, $9, $10, $11, $12, CASE WHEN $8 = 'suspended' THEN $12::integer END, $13, $13)
        ON CONFLICT (run_id) DO UPDATE SET
          schema_version = excluded.schema_version, agent = excluded.agent, turn = excluded.turn, status = excluded.status,
          usage = excluded.usage, output = excluded.output, error = excluded.error, entry_count = excluded.entry_count,
          suspended_count = CASE WHEN excluded.status <> 'suspended' THEN NULL WHEN r.status = 'suspended' THEN r.suspended_count ELSE excluded.entry_count END,
          updated_at = excluded.updated_at, wake_at = NULL`),
      [
        runId,
        before,
        entries.map((entry) => entry.kind),
        entries.map((entry) => JSON.stringify(entry)),
        CHECKPOINT_SCHEMA_VERSION,
        head.agent,
        head.turn,
        head.status,
        JSON.stringify(head.usage),
        head.output ?? null,
        head.error ? JSON.stringify({ name: head.error.name, message: head.error.message }) : null,
        count,
        this.now(),
      ],
    );
    // A parked run is woken by claimNext at its earliest wait deadline (durable timers): read
    // from the log after this append's entries are in (a resolution may have closed a wait).
    if (head.status === 'suspended') await q(this.sql(`UPDATE {s}.troupe_runs SET wake_at = ${OPEN_WAIT_DEADLINE} WHERE run_id = $1`), [runId]);
  }

  /** Serialises the writers of one run until the transaction ends (two first appends of a new run included). */
  private async lockRun(q: Query, runId: string): Promise<void> {
    await q('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`troupe/${this.db.schema}/run/${runId}`]);
  }

  /** Takes the lease when it is free, expired, `owner`'s own or held by exactly `takeOverFrom`; undefined when another owner holds it. */
  private async takeLease(q: Query, runId: string, owner: string, now: number, expiresAt: number, takeOverFrom?: string): Promise<Lease | undefined> {
    const rows = await q(
      this.sql(`INSERT INTO {s}.troupe_leases AS l (run_id, owner, expires_at) VALUES ($1, $2, $3)
        ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
        WHERE l.owner = excluded.owner OR l.expires_at <= $4 OR l.owner = $5
        RETURNING run_id`),
      [runId, owner, expiresAt, now, takeOverFrom ?? null],
    );
    return rows.length > 0 ? { runId, owner, expiresAt } : undefined;
  }

  private async heldLease(q: Query, runId: string): Promise<Lease | undefined> {
    const row = (await q<{ owner: string; expires_at: string }>(this.sql('SELECT owner, expires_at FROM {s}.troupe_leases WHERE run_id = $1'), [runId]))[0];
    return row && { runId, owner: row.owner, expiresAt: Number(row.expires_at) };
  }

  private head(row: RunRow, where: string, version: number): CheckpointHead {
    const head: Record<string, unknown> = {
      agent: row.agent,
      turn: row.turn,
      usage: decodeJson(row.usage, `${where} head usage`),
      status: row.status,
    };
    if (row.output !== null) head['output'] = row.output;
    if (row.error !== null) head['error'] = decodeJson(row.error, `${where} head error`);
    return decodeHead(head, `${where} head`, version);
  }

  private runWhere(runId: string): string {
    return `${this.db.where}: run '${runId}'`;
  }

  private sql(text: string): string {
    return inSchema(text, this.db.s);
  }
}

function leaseOf(row: RunRow): Lease | undefined {
  return row.lease_owner === null ? undefined : { runId: row.run_id, owner: row.lease_owner, expiresAt: Number(row.lease_expires_at) };
}

/** Code-point order of run ids (the same on every node, whatever its locale). */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
