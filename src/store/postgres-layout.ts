/**
 * The PostgreSQL table layout (format.md, "PostgreSQL layout"), one versioned component per
 * store as in SQLite: `troupe_meta(component, schema_version)` says which layout a schema
 * holds. Only `troupe db migrate` (migratePostgres) creates or changes tables.
 */
import { UserError } from '../errors.js';

/** One component's tables; `create` builds the current version, `migrate[v]` goes from v to v + 1. */
export interface PostgresComponent {
  readonly name: 'checkpoints' | 'sessions';
  readonly version: number;
  readonly label: string;
  /** SQL with `{s}` standing for the quoted schema name. */
  readonly create: string;
  readonly migrate?: Readonly<Record<number, string>>;
}

export const META_TABLE = `CREATE TABLE IF NOT EXISTS {s}.troupe_meta (
  component text PRIMARY KEY,
  schema_version integer NOT NULL
)`;

/**
 * Layout 2 adds the cross-node tables: `troupe_messages` (approvals, cancels and steers sent to
 * whichever worker owns a run; kept until the run ends) and `troupe_events` (every run event a
 * worker streamed, for server nodes and late clients). Both are announced with NOTIFY.
 */
const CLUSTER_TABLES = `
    CREATE TABLE {s}.troupe_messages (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      run_id text NOT NULL,
      kind text NOT NULL,
      body text NOT NULL,
      sent_at bigint NOT NULL,
      applied_at bigint
    );
    CREATE INDEX troupe_messages_run ON {s}.troupe_messages (run_id, id);
    CREATE TABLE {s}.troupe_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      run_id text NOT NULL,
      type text NOT NULL,
      data text NOT NULL,
      at bigint NOT NULL
    );
    CREATE INDEX troupe_events_run ON {s}.troupe_events (run_id, id);
`;

/** Jobs whose run has not stored anything yet: what a claim looks through (finished jobs stay out of it). */
const WAITING_JOBS_INDEX = `CREATE INDEX troupe_jobs_waiting ON {s}.troupe_jobs (position) WHERE started_at IS NULL;`;

/**
 * The earliest deadline among the open waits of run `$1` (`wait_request` with a `deadline`: a
 * timer's time, an event's or a question's timeout; `approval_request` with a `deadline`: the
 * approval timeout, format 6), NULL when none has one: what `troupe_runs.wake_at` holds for a
 * suspended run. A wait is open when it was requested after the run's last `reply`/`turn_end`
 * and has neither its `wait_resolution` / `approval_decision` nor its call's `result` (the rule
 * of pendingStoredWaits). Only a root run parks, and only when no sub-run is in flight, so its
 * own entries are enough.
 */
export const OPEN_WAIT_DEADLINE = `(SELECT min((w.data::jsonb->>'deadline')::bigint) FROM {s}.troupe_entries w
  WHERE w.run_id = $1 AND w.kind IN ('wait_request', 'approval_request') AND w.data::jsonb ? 'deadline'
    AND w.seq > COALESCE((SELECT max(t.seq) FROM {s}.troupe_entries t WHERE t.run_id = $1 AND t.kind IN ('reply', 'turn_end')), 0)
    AND NOT EXISTS (SELECT 1 FROM {s}.troupe_entries x WHERE x.run_id = $1 AND x.seq > w.seq AND (
      (x.kind = 'wait_resolution' AND x.data::jsonb->>'waitId' = w.data::jsonb->>'waitId')
      OR (x.kind = 'approval_decision' AND x.data::jsonb->>'approvalId' = w.data::jsonb->>'approvalId')
      OR (x.kind = 'result' AND x.data::jsonb->'message'->>'callId' = w.data::jsonb->>'callId'))))`;

/** Layout 3: when a suspended run's earliest wait deadline is (claimNext resumes it then). */
const WAKE_COLUMN = `ALTER TABLE {s}.troupe_runs ADD COLUMN wake_at bigint;
    CREATE INDEX troupe_runs_wake ON {s}.troupe_runs (wake_at) WHERE wake_at IS NOT NULL;`;

export const POSTGRES_CHECKPOINTS: PostgresComponent = {
  name: 'checkpoints',
  version: 3,
  migrate: {
    1:
      CLUSTER_TABLES +
      `ALTER TABLE {s}.troupe_jobs ADD COLUMN started_at bigint;
       UPDATE {s}.troupe_jobs j SET started_at = j.enqueued_at WHERE EXISTS (SELECT 1 FROM {s}.troupe_runs r WHERE r.run_id = j.run_id);
       ` +
      WAITING_JOBS_INDEX,
    // Runs suspended before the upgrade get their wake time from their logs.
    2: WAKE_COLUMN + `\n    UPDATE {s}.troupe_runs r SET wake_at = ${OPEN_WAIT_DEADLINE.replaceAll('$1', 'r.run_id')} WHERE r.status = 'suspended';`,
  },
  label: 'checkpoint store',
  create: `
    CREATE TABLE {s}.troupe_runs (
      run_id text PRIMARY KEY,
      position bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      schema_version integer NOT NULL,
      agent text NOT NULL,
      turn integer NOT NULL,
      status text NOT NULL,
      usage text NOT NULL,
      output text,
      error text,
      entry_count integer NOT NULL,
      suspended_count integer,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX troupe_runs_status ON {s}.troupe_runs (status, position);
    CREATE TABLE {s}.troupe_entries (
      run_id text NOT NULL,
      seq integer NOT NULL,
      kind text NOT NULL,
      data text NOT NULL,
      PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE {s}.troupe_leases (
      run_id text PRIMARY KEY,
      owner text NOT NULL,
      expires_at bigint NOT NULL
    );
    CREATE TABLE {s}.troupe_jobs (
      run_id text PRIMARY KEY,
      position bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      agent text NOT NULL,
      input text NOT NULL,
      enqueued_at bigint NOT NULL,
      started_at bigint
    );
  ` +
    CLUSTER_TABLES +
    WAITING_JOBS_INDEX +
    WAKE_COLUMN,
};

export const POSTGRES_SESSIONS: PostgresComponent = {
  name: 'sessions',
  version: 1,
  label: 'session store',
  create: `
    CREATE TABLE {s}.troupe_session_runs (
      session_id text NOT NULL,
      run_id text NOT NULL,
      position integer NOT NULL,
      schema_version integer NOT NULL,
      message_count integer NOT NULL,
      created_at bigint NOT NULL,
      PRIMARY KEY (session_id, run_id),
      UNIQUE (session_id, position)
    );
    CREATE TABLE {s}.troupe_session_messages (
      session_id text NOT NULL,
      position integer NOT NULL,
      seq integer NOT NULL,
      data text NOT NULL,
      PRIMARY KEY (session_id, position, seq)
    );
  `,
};

export const POSTGRES_COMPONENTS: readonly PostgresComponent[] = [POSTGRES_CHECKPOINTS, POSTGRES_SESSIONS];

/** Checks a schema name and returns it quoted for SQL. @throws UserError for a name outside [a-z_][a-z0-9_]*. */
export function quoteSchema(schema: unknown): string {
  if (typeof schema !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new UserError(`A PostgreSQL schema name must be lower-case letters, digits and underscores (starting with a letter or underscore, at most 63), got ${JSON.stringify(schema)}.`);
  }
  return `"${schema}"`;
}

/** `sql` with the schema filled in. */
export function inSchema(sql: string, quotedSchema: string): string {
  return sql.replaceAll('{s}', quotedSchema);
}
