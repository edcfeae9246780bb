/**
 * A PostgreSQL connection pool for one of the stores: every driver failure becomes a typed
 * error (StoreUnavailable for connection trouble, UserError for missing or foreign tables),
 * every write runs in one transaction, and the table layout is checked (never created) before
 * the first use.
 */
import type * as Pg from 'pg';
import { StoreUnavailable, TroupeError, UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import { checkSchemaVersion } from './format.js';
import { pg } from './postgres-driver.js';
import { inSchema, quoteSchema, type PostgresComponent } from './postgres-layout.js';
import type { PostgresConnection, PostgresConnectionOptions, PostgresStoreOptions } from './postgres-options.js';

/** Runs one statement; rows come back as plain objects. */
const POSTGRES_OPTION_KEYS = optionKeys<PostgresStoreOptions>({ schema: true, now: true });
const POSTGRES_CONNECTION_KEYS = optionKeys<PostgresConnectionOptions>({
  connectionString: true,
  host: true,
  port: true,
  user: true,
  password: true,
  database: true,
  max: true,
  connectionTimeoutMillis: true,
  idleTimeoutMillis: true,
  ssl: true,
  applicationName: true,
});

export type Query = <Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]) => Promise<Row[]>;

/** SQLSTATE classes that mean "the database cannot be used now", not "the statement is wrong". */
const UNAVAILABLE_CLASSES = ['08', '28', '3D', '53', '57', '58'];

/** `postgres://user@host:port/database`, without the password, for messages. */
export function describeConnection(connection: PostgresConnection): string {
  const options: PostgresConnectionOptions = typeof connection === 'string' ? { connectionString: connection } : connection;
  let user = options.user;
  let host = options.host;
  let port = options.port === undefined ? undefined : String(options.port);
  let database = options.database;
  if (options.connectionString !== undefined) {
    try {
      const url = new URL(options.connectionString);
      user ??= decodeURIComponent(url.username) || undefined;
      host ??= url.hostname || undefined;
      port ??= url.port || undefined;
      database ??= decodeURIComponent(url.pathname.slice(1)) || undefined;
    } catch {
      // Not a URL (a libpq key=value string): leave the parts unknown rather than echo a secret.
    }
  }
  return `postgres://${user ? `${user}@` : ''}${host ?? 'localhost'}:${port ?? '5432'}/${database ?? user ?? ''}`;
}

/** @internal The driver options for `connection` (pools and the listener's client). @throws UserError for a malformed connection. */
export function poolConfig(connection: PostgresConnection): Pg.PoolConfig {
  if (typeof connection === 'string') {
    if (!/^postgres(ql)?:\/\//.test(connection)) throw new UserError(`A PostgreSQL connection string must start with postgres:// or postgresql://, got ${JSON.stringify(connection.replace(/:[^:@/]*@/, ':***@'))}.`);
    connection = { connectionString: connection };
  }
  if (typeof connection !== 'object' || connection === null) throw new UserError(`A PostgreSQL store needs a connection string or pool options, got ${JSON.stringify(connection)}.`);
  const { applicationName, ssl, ...rest } = connection;
  return {
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 10_000,
    max: 10,
    ...rest,
    ...(ssl !== undefined ? { ssl: ssl as Pg.PoolConfig['ssl'] } : {}),
    application_name: applicationName ?? 'troupe',
    keepAlive: true,
    // Idle pooled connections do not keep a process alive (a script that forgot close() still exits).
    allowExitOnIdle: true,
  };
}

/** The pool and the schema one store instance works in. */
export class PostgresDatabase {
  /** "PostgreSQL checkpoint store 'postgres://u@h:5432/db' schema 'public'": names the store in messages. */
  readonly where: string;
  readonly schema: string;
  /** The quoted schema, for SQL. */
  readonly s: string;
  private readonly pool: Pg.Pool;
  private readonly url: string;
  private checked: Promise<void> | undefined;
  private closed = false;

  /** `component`: the tables to check before the first use; undefined for the migration, which makes them. */
  constructor(
    connection: PostgresConnection,
    label: string,
    private readonly component: PostgresComponent | undefined,
    options: PostgresStoreOptions,
  ) {
    checkOptionKeys(options, POSTGRES_OPTION_KEYS, `PostgreSQL ${label}`);
    if (typeof connection === 'object' && connection !== null) checkOptionKeys(connection, POSTGRES_CONNECTION_KEYS, 'PostgreSQL connection');
    this.schema = options.schema ?? 'public';
    this.s = quoteSchema(this.schema);
    this.url = describeConnection(connection);
    this.where = `PostgreSQL ${label} '${this.url}' schema '${this.schema}'`;
    this.pool = new pg.Pool(poolConfig(connection));
    // An idle connection the server closes emits 'error' on the pool; the pool drops it and the
    // next operation opens a new one, so there is nothing to do here (without a listener, Node
    // would end the process).
    this.pool.on('error', () => {});
  }

  /** Reads outside a transaction (one statement sees one snapshot). */
  async query<Row = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.transaction((q) => q<Row>(sql, params), false);
  }

  /**
   * Runs `work` in one transaction on one connection: all its statements commit together or
   * none does. Errors thrown by `work` itself (RunLocked, UserError) roll back and pass
   * through unchanged; driver failures become StoreUnavailable. `begin` is the statement that
   * opens the transaction (e.g. a read-only snapshot), or false for a single statement.
   */
  async transaction<T>(work: (q: Query) => Promise<T>, begin: string | false = 'BEGIN'): Promise<T> {
    await this.ready();
    return this.withClient(async (q, client) => {
      if (begin === false) return work(q);
      await q(begin);
      try {
        const out = await work(q);
        await this.commit(client);
        return out;
      } catch (error) {
        // Through `q`: a rollback that fails on a dead connection marks it broken, so it is destroyed.
        await q('ROLLBACK').catch(() => {});
        throw error;
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  /** The message telling the user to migrate, with the command to run. */
  migrateHint(): string {
    return `run \`troupe db migrate --db '${this.url}'${this.schema === 'public' ? '' : ` --schema ${this.schema}`}\``;
  }

  private async commit(client: Pg.PoolClient): Promise<void> {
    try {
      await client.query('COMMIT');
    } catch (error) {
      // The COMMIT was sent: the server may have committed before the connection went.
      throw this.failure(error, 'unknown');
    }
  }

  private async withClient<T>(work: (q: Query, client: Pg.PoolClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new UserError(`${this.where} is closed.`);
    let client: Pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw this.failure(error, 'not_written');
    }
    // A connection lost while checked out emits 'error' on the client; the failing query
    // reports it, so the event itself only needs a listener.
    const ignore = (): void => {};
    client.on('error', ignore);
    let broken: unknown;
    const q: Query = async <Row>(sql: string, params: readonly unknown[] = []) => {
      try {
        return (await client.query(sql, params as unknown[])).rows as Row[];
      } catch (error) {
        const mapped = this.failure(error, 'not_written');
        if (mapped instanceof StoreUnavailable) broken = error;
        throw mapped;
      }
    };
    try {
      return await work(q, client);
    } catch (error) {
      if (error instanceof StoreUnavailable) broken ??= error;
      throw error;
    } finally {
      client.off('error', ignore);
      // A connection that failed is destroyed, not handed to the next operation.
      client.release(broken === undefined ? undefined : broken instanceof Error ? broken : new Error(String(broken)));
    }
  }

  /** Checks the component's layout version once per store (again after a failed check). */
  private ready(): Promise<void> {
    this.checked ??= this.checkLayout().catch((error: unknown) => {
      this.checked = undefined;
      throw error;
    });
    return this.checked;
  }

  private async checkLayout(): Promise<void> {
    const { component } = this;
    if (!component) return;
    const rows = await this.withClient(async (q) => {
      const tables = await q<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [`${this.s}.troupe_meta`]);
      if (!tables[0]?.present) return undefined;
      return q<{ version: unknown }>(inSchema('SELECT schema_version AS version FROM {s}.troupe_meta WHERE component = $1', this.s), [component.name]);
    });
    if (rows === undefined || rows.length === 0) {
      throw new UserError(`${this.where} has no troupe ${component.name} tables: ${this.migrateHint()} first (troupe never creates tables on its own).`);
    }
    const what = `'${component.name}' table layout version`;
    const version = checkSchemaVersion(rows[0]!.version, component.version, this.where, what);
    if (version < component.version) {
      throw new UserError(`${this.where} uses ${what} ${version}, but this version of troupe needs ${component.version}: ${this.migrateHint()} to upgrade it.`);
    }
  }

  /** Maps a driver error to a typed one; errors that are already typed pass through. */
  private failure(error: unknown, outcome: 'not_written' | 'unknown'): Error {
    if (error instanceof TroupeError) return error;
    const code = (error as { code?: unknown }).code;
    const isServerError = error instanceof pg.DatabaseError;
    if (isServerError && (code === '42P01' || code === '3F000')) {
      return new UserError(`${this.where} is missing a table (${error.message}): ${this.migrateHint()}.`, { cause: error });
    }
    if (isServerError && !(typeof code === 'string' && UNAVAILABLE_CLASSES.includes(code.slice(0, 2)))) {
      return error as Error;
    }
    const detail = describeFailure(error);
    const tail =
      outcome === 'unknown'
        ? 'the connection failed while committing, so this write may or may not be stored (load the run to see; a fenced retry is refused if it was)'
        : 'nothing was written';
    return new StoreUnavailable(this.where, `Cannot use ${this.where}: ${detail}; ${tail}.`, { cause: error, outcome });
  }
}

function describeFailure(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' && message.length > 0 ? message : String(error);
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused, is the server running and listening there? (${text})`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found (${text})`;
    case 'ETIMEDOUT':
      return `connecting timed out (${text})`;
    case 'ECONNRESET':
      return `the connection was reset (${text})`;
    default:
      return text;
  }
}
