/** Opening a SQLite file for one of the stores: lazily, WAL mode, versioned tables. */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import { requirePeer } from '../peers.js';
import { checkSchemaVersion } from './format.js';
import type { Component, SqliteStoreOptions } from './sqlite-options.js';

export type { Component, SqliteStoreOptions } from './sqlite-options.js';

export type SqliteDatabase = BetterSqlite3.Database;

// An optional peer: loaded when `troupe/sqlite` is imported (the addon itself loads when a database opens).
const Database = requirePeer<typeof BetterSqlite3>('better-sqlite3', 'troupe/sqlite');

const META = `CREATE TABLE IF NOT EXISTS troupe_meta (
  component TEXT PRIMARY KEY,
  schema_version INTEGER NOT NULL
) STRICT`;

/**
 * A lazily opened connection. The file (and its directories) is created on the first write;
 * a read before that finds nothing and creates nothing. `":memory:"` is a private in-memory
 * database.
 */
export class SqliteFile {
  readonly path: string;
  private database: SqliteDatabase | undefined;
  private closed = false;

  constructor(
    path: string,
    private readonly component: Component,
    private readonly options: SqliteStoreOptions,
  ) {
    if (typeof path !== 'string' || path.length === 0) throw new UserError(`A SQLite ${component.label} needs a file path, got ${JSON.stringify(path)}.`);
    checkOptionKeys(options, SQLITE_OPTION_KEYS, `SQLite ${component.label}`);
    this.path = path === ':memory:' ? path : resolve(path);
  }

  get where(): string {
    return `SQLite ${this.component.label} '${this.path}'`;
  }

  /** The open database; undefined when `create` is false and the file does not exist yet. */
  open(create: true): SqliteDatabase;
  open(create: boolean): SqliteDatabase | undefined;
  open(create: boolean): SqliteDatabase | undefined {
    if (this.closed) throw new UserError(`${this.where} is closed.`);
    if (this.database) return this.database;
    const memory = this.path === ':memory:';
    if (!memory && !existsSync(this.path)) {
      if (!create) return undefined;
      mkdirSync(dirname(this.path), { recursive: true });
    }
    let db: SqliteDatabase | undefined;
    try {
      db = new Database(this.path);
      const busyTimeoutMs = Math.max(0, Math.floor(this.options.busyTimeoutMs ?? 5000));
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      if (!memory) {
        const mode = switchToWal(db, busyTimeoutMs);
        if (mode !== 'wal') throw new Error(`could not switch to WAL mode (journal_mode is ${String(mode)})`);
      }
      db.pragma(`synchronous = ${this.options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
      this.initialise(db);
    } catch (error) {
      db?.close();
      if (error instanceof UserError) throw error;
      throw new UserError(`Cannot open ${this.where}: ${error instanceof Error ? error.message : String(error)}.`, { cause: error });
    }
    this.database = db;
    return db;
  }

  private initialise(db: SqliteDatabase): void {
    const { component } = this;
    db.transaction(() => {
      db.exec(META);
      const row = db.prepare('SELECT schema_version AS version FROM troupe_meta WHERE component = ?').get(component.name) as { version: unknown } | undefined;
      if (!row) {
        db.exec(component.create);
        db.prepare('INSERT INTO troupe_meta (component, schema_version) VALUES (?, ?)').run(component.name, component.version);
        return;
      }
      const what = `'${component.name}' table layout version`;
      let version = checkSchemaVersion(row.version, component.version, this.where, what);
      // Older layouts are migrated step by step inside this transaction: all steps or none.
      while (version < component.version) {
        const step = component.migrate?.[version];
        if (step === undefined) throw new UserError(`${this.where} uses ${what} ${version}, which this version of troupe cannot migrate.`);
        db.exec(step);
        version += 1;
      }
      db.prepare('UPDATE troupe_meta SET schema_version = ? WHERE component = ?').run(version, component.name);
    }).immediate();
  }

  close(): void {
    this.closed = true;
    this.database?.close();
    this.database = undefined;
  }
}

const SQLITE_OPTION_KEYS = optionKeys<SqliteStoreOptions>({ synchronous: true, busyTimeoutMs: true, now: true });

/**
 * Sets WAL mode. SQLite does not call the busy handler for this switch, so two processes
 * opening one new file at once would fail with "database is locked": retry for the busy timeout.
 */
function switchToWal(db: SqliteDatabase, busyTimeoutMs: number): unknown {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      return db.pragma('journal_mode = WAL', { simple: true });
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      // A synchronous pause (opening a store is synchronous): the other process's switch takes milliseconds.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
}
