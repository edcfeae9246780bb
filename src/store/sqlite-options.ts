/** Options and table descriptions of the SQLite stores (no better-sqlite3 types, so declarations stay free of them). */

export interface SqliteStoreOptions {
  /**
   * `"full"` (default): every append is synced to disk before it returns, so a stored entry
   * survives a power loss. `"normal"`: WAL's cheaper mode; an append survives a crash of the
   * process but the last ones may be lost on a power loss.
   */
  readonly synchronous?: 'full' | 'normal';
  /** How long a write waits for another connection's lock before failing (default 5000 ms). */
  readonly busyTimeoutMs?: number;
  /** Clock for the stored timestamps (default `Date.now`). */
  readonly now?: () => number;
}

/** One component's tables in a file; its layout version is kept in `troupe_meta`. */
export interface Component {
  /** Key in `troupe_meta`, e.g. "checkpoints". */
  readonly name: string;
  /** Layout version this build creates and reads. */
  readonly version: number;
  /** Statements creating the component's tables at `version` (run once, in the creating transaction). */
  readonly create: string;
  /** `migrate[v]` takes an existing layout from version v to v + 1 (run in the opening transaction). */
  readonly migrate?: Readonly<Record<number, string>>;
  /** Human name for messages, e.g. "checkpoint store". */
  readonly label: string;
}
