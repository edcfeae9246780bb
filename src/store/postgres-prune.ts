/**
 * Retention of `troupe_events` (the stream a cluster's server nodes replay to clients): the
 * events of finished root runs are pruned by age and/or count. Only the event stream goes;
 * the run's log (`troupe_entries`) and head, the truth, are never touched. A pruned run keeps
 * one marker row (type `troupe.events_pruned`, with the id of its last pruned event) so a
 * client attached to it later learns it was pruned instead of seeing an empty stream.
 */
import { fromStoredStatus, type StoredRunStatus } from '../run-status.js';
import { PRUNED_EVENTS_TYPE, checkRetention, type EventRetention, type PrunedEventsMarker, type PrunedRun, type PruneReport, type RetentionRule } from './event-retention.js';
import { FINISHED_STORED_STATUSES } from './format.js';
import { PostgresDatabase, type Query } from './postgres.js';
import { POSTGRES_CHECKPOINTS, inSchema } from './postgres-layout.js';
import type { PostgresConnection } from './postgres-options.js';

/** Runs pruned per transaction: a backlog is pruned in steps, each short. */
const BATCH = 200;

/** A finished root run (`{a}` is its alias) that still has run events: a run the rules look at. */
const HAS_EVENTS = (a: string) => `position('/' in ${a}.run_id) = 0 AND ${a}.status = ANY($1::text[])
  AND EXISTS (SELECT 1 FROM {s}.troupe_events e WHERE e.run_id = ${a}.run_id AND e.type <> '${PRUNED_EVENTS_TYPE}')`;

/**
 * The runs to prune, oldest finished first: finished root runs with events, no live lease (a
 * worker may still be publishing their last events), older than the cutoff, and not among the
 * `keepLast` that finished last. `lock`: take up to BATCH of them, each row locked SKIP LOCKED,
 * so pruners running at once (several workers) take different runs and never wait.
 */
function candidatesSql(lock: boolean): string {
  return `SELECT r.run_id, r.status, r.schema_version, r.updated_at FROM {s}.troupe_runs r
    WHERE ${HAS_EVENTS('r')}
      AND NOT EXISTS (SELECT 1 FROM {s}.troupe_leases l WHERE l.run_id = r.run_id AND l.expires_at > $2)
      AND ($3::bigint IS NULL OR r.updated_at <= $3)
      AND ($4::integer IS NULL OR r.run_id NOT IN (
        SELECT k.run_id FROM {s}.troupe_runs k WHERE ${HAS_EVENTS('k')} ORDER BY k.updated_at DESC, k.position DESC LIMIT $4))
    ORDER BY r.updated_at, r.position${lock ? ` LIMIT ${BATCH} FOR UPDATE OF r SKIP LOCKED` : ''}`;
}

interface CandidateRow {
  run_id: string;
  status: string;
  schema_version: number;
  updated_at: string;
}

/**
 * Prunes (or with `dryRun`, lists) the events of finished runs that `rule` drops, at time
 * `now`. Each step is one transaction over up to BATCH runs: their events but the last are
 * deleted and the last becomes the run's marker row. Lock order: the runs' `troupe_runs` rows
 * (SKIP LOCKED, never waited for), then their `troupe_events` rows; the log is not read or
 * written, so the writer lock is not taken.
 * @throws StoreUnavailable (the steps committed before stay done); UserError (tables missing).
 */
export async function pruneEventsIn(db: PostgresDatabase, rule: RetentionRule, now: number, dryRun: boolean): Promise<PruneReport> {
  const params = [FINISHED_STORED_STATUSES, now, rule.olderThanMs === undefined ? null : now - rule.olderThanMs, rule.keepLast ?? null];
  if (dryRun) {
    return db.transaction(async (q) => {
      const rows = await q<CandidateRow>(inSchema(candidatesSql(false), db.s), params);
      const runs = await describe(db, q, rows);
      return report(true, runs.map(({ run }) => run));
    }, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }
  const pruned: PrunedRun[] = [];
  for (;;) {
    const step = await db.transaction(async (q) => {
      const rows = await q<CandidateRow>(inSchema(candidatesSql(true), db.s), params);
      // Counted after the lock, in a newer snapshot: a run another pruner pruned and committed
      // between this SELECT's snapshot and its lock (its head row is unchanged, so PostgreSQL
      // does not re-check it) has no events left, and is not pruned or reported twice.
      const runs = (await describe(db, q, rows)).filter(({ run }) => run.events > 0);
      if (runs.length === 0) return { locked: rows.length, runs };
      const ids = runs.map(({ run }) => run.runId);
      const lasts = runs.map(({ last }) => String(last));
      await q(inSchema('DELETE FROM {s}.troupe_events e USING unnest($1::text[], $2::bigint[]) AS t(run_id, last) WHERE e.run_id = t.run_id AND e.id < t.last', db.s), [ids, lasts]);
      const markers = runs.map(({ run, last }): PrunedEventsMarker => ({ type: PRUNED_EVENTS_TYPE, runId: run.runId, through: last, prunedAt: now }));
      await q(inSchema('UPDATE {s}.troupe_events e SET type = $3, data = t.data FROM unnest($1::bigint[], $2::text[]) AS t(id, data) WHERE e.id = t.id', db.s), [
        lasts,
        markers.map((marker) => JSON.stringify(marker)),
        PRUNED_EVENTS_TYPE,
      ]);
      return { locked: rows.length, runs };
    });
    pruned.push(...step.runs.map(({ run }) => run));
    if (step.locked < BATCH) return report(false, pruned);
  }
}

/** Each candidate with its event count (marker rows not counted) and the id of its last row. */
async function describe(db: PostgresDatabase, q: Query, rows: readonly CandidateRow[]): Promise<Array<{ run: PrunedRun; last: number }>> {
  if (rows.length === 0) return [];
  const counts = await q<{ run_id: string; events: string; last: string }>(
    inSchema(`SELECT run_id, count(*) FILTER (WHERE type <> '${PRUNED_EVENTS_TYPE}') AS events, max(id) AS last FROM {s}.troupe_events WHERE run_id = ANY($1::text[]) GROUP BY run_id`, db.s),
    [rows.map((row) => row.run_id)],
  );
  const byRun = new Map(counts.map((row) => [row.run_id, row]));
  return rows.map((row) => {
    const count = byRun.get(row.run_id)!;
    return {
      run: { runId: row.run_id, status: fromStoredStatus(row.status, Number(row.schema_version)) as StoredRunStatus, finishedAt: Number(row.updated_at), events: Number(count.events) },
      last: Number(count.last),
    };
  });
}

function report(dryRun: boolean, runs: PrunedRun[]): PruneReport {
  return { dryRun, runs, events: runs.reduce((sum, run) => sum + run.events, 0) };
}

/** `pruneEvents`' options: the retention, the schema, and whether to only list. */
export interface PruneOptions extends EventRetention {
  /** Schema of the tables (default "public"). */
  readonly schema?: string;
  /** List what would be pruned; delete nothing. */
  readonly dryRun?: boolean;
}

/**
 * `troupe db prune`: prunes the stored events (`troupe_events`) of finished runs by age
 * and/or count, keeping each pruned run's marker so a stream attached to it later ends with
 * `EventsPruned`. Run logs and heads are never touched. Safe while workers and servers run,
 * and from several processes at once.
 * @throws UserError for a bad option, missing tables; StoreUnavailable when the database cannot be used.
 */
export async function pruneEvents(connection: PostgresConnection, options: PruneOptions): Promise<PruneReport> {
  const { schema, dryRun, ...retention } = options;
  const rule = checkRetention(retention, 'pruneEvents');
  const db = new PostgresDatabase(connection, 'run bus', POSTGRES_CHECKPOINTS, schema !== undefined ? { schema } : {});
  try {
    return await pruneEventsIn(db, rule, Date.now(), dryRun === true);
  } finally {
    await db.close();
  }
}
