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

export const POSTGRES_CHECKPOINTS: PostgresComponent = {
  name: 'checkpoints',
  version: 2,
  migrate: { 1: CLUSTER_TABLES },
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
      enqueued_at bigint NOT NULL
    );
  ` + CLUSTER_TABLES,
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
