/** Options of the PostgreSQL stores (no `pg` types, so the declarations stay free of them). */

/** Where and how to connect; the subset of `pg`'s pool options troupe passes through. */
export interface PostgresConnectionOptions {
  /** `postgres://user:password@host:port/database` (the other fields override its parts). */
  readonly connectionString?: string;
  readonly host?: string;
  readonly port?: number;
  readonly user?: string;
  readonly password?: string;
  readonly database?: string;
  /** Most connections the store's pool opens (default 10). */
  readonly max?: number;
  /** How long to wait for a connection before failing with StoreUnavailable (default 10000 ms). */
  readonly connectionTimeoutMillis?: number;
  /** Idle connections are closed after this long (default 10000 ms). */
  readonly idleTimeoutMillis?: number;
  /** Passed to the driver as is (`true`, or TLS options). */
  readonly ssl?: boolean | Record<string, unknown>;
  /** Shown in `pg_stat_activity` (default "troupe"). */
  readonly applicationName?: string;
}

export interface PostgresStoreOptions {
  /**
   * The schema holding troupe's tables (default "public"); `troupe db migrate --schema` creates
   * it. Lower-case letters, digits and underscores, starting with a letter or underscore.
   */
  readonly schema?: string;
  /**
   * Clock for timestamps and lease expiry (default `Date.now`). Leases compare this clock of
   * every process, so hosts sharing a database need clocks that agree far better than the
   * lease TTL.
   */
  readonly now?: () => number;
}

/** A connection string, or pool options. */
export type PostgresConnection = string | PostgresConnectionOptions;
