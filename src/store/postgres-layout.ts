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

export const POSTGRES_CHECKPOINTS: PostgresComponent = {
  name: 'checkpoints',
  version: 1,
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
  `,
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
