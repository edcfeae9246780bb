import type { Statement } from 'better-sqlite3';
import { UserError } from '../errors.js';
import { RunLocked } from '../errors.js';
import {
  checkFence,
  checkLeaseRequest,
  checkRunId,
  lostLease,
  mayClaim,
  statusFilter,
  type AppendFence,
  type ClaimOptions,
  type AppendRequest,
  type Lease,
  type CheckpointEntry,
  type CheckpointHead,
  type CheckpointStore,
  type ListRunsOptions,
  type RunSummary,
  type StoredRun,
} from './checkpoint-store.js';
import { CHECKPOINT_SCHEMA_VERSION, checkEntries, checkHead, checkSchemaVersion, decodeEntry, decodeHead, decodeJson } from './format.js';
import type { Component, SqliteStoreOptions } from './sqlite-options.js';
import { SqliteFile, type SqliteDatabase } from './sqlite.js';

/** Leases (layout 2): who may write a run until when; a row may exist before the run's first append. */
const LEASES = `
    CREATE TABLE troupe_leases (
      run_id TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      expires_at INTEGER NOT NULL
    ) STRICT;
  `;

/** Layout of the checkpoint tables (format.md, "SQLite layout"). */
export const CHECKPOINT_TABLES: Component = {
  name: 'checkpoints',
  version: 2,
  label: 'checkpoint store',
  migrate: { 1: LEASES },
  create: `
    CREATE TABLE troupe_runs (
      run_id TEXT PRIMARY KEY,
      schema_version INTEGER NOT NULL,
      agent TEXT NOT NULL,
      turn INTEGER NOT NULL,
      status TEXT NOT NULL,
      usage TEXT NOT NULL,
      output TEXT,
      error TEXT,
      entry_count INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX troupe_runs_status ON troupe_runs (status);
    CREATE TABLE troupe_entries (
      run_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      kind TEXT NOT NULL,
      data TEXT NOT NULL,
      PRIMARY KEY (run_id, seq)
    ) STRICT, WITHOUT ROWID;
  ${LEASES}`,
};

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
  created_at: number;
  updated_at: number;
}

interface Statements {
  position: Statement<[string], { schema_version: unknown; entry_count: number } | undefined>;
  insertEntry: Statement<[string, number, string, string]>;
  upsertHead: Statement<[HeadParams]>;
  run: Statement<[string], RunRow | undefined>;
  entries: Statement<[string], { seq: number; kind: unknown; data: unknown }>;
  list: Statement<[], RunRow & { lease_owner: string | null; lease_expires_at: number | null }>;
  deleteEntries: Statement<[string]>;
  deleteRun: Statement<[string]>;
  lease: Statement<[string], { owner: string; expires_at: number } | undefined>;
  putLease: Statement<[string, string, number]>;
  deleteLease: Statement<[string]>;
  releaseLease: Statement<[string, string]>;
}

export type { AppendRequest } from './checkpoint-store.js';

interface HeadParams {
  runId: string;
  version: number;
  agent: string;
  turn: number;
  status: string;
  usage: string;
  output: string | null;
  error: string | null;
  count: number;
  now: number;
}

/**
 * Checkpoint store in one SQLite file (better-sqlite3, WAL mode). The file and its folders are
 * created on the first append. Each `append` is one transaction: the new entries are inserted
 * after the run's last one and the run's head row is upserted; stored entries are never
 * rewritten. Reads check every record and throw a UserError naming the first bad one.
 */
export class SqliteCheckpointStore implements CheckpointStore {
  private readonly file: SqliteFile;
  private readonly now: () => number;
  private statements: Statements | undefined;
  private appendTx: ((runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead, fence: AppendFence | undefined) => void) | undefined;
  private batchTx: ((requests: readonly AppendRequest[]) => (Error | undefined)[]) | undefined;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.file = new SqliteFile(path, CHECKPOINT_TABLES, options);
    this.now = options.now ?? Date.now;
  }

  /** Absolute path of the file (or ":memory:"). */
  get path(): string {
    return this.file.path;
  }

  append(runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead, fence?: AppendFence): void {
    checkRunId(runId);
    checkEntries(entries, `run '${runId}'`);
    checkHead(head, `run '${runId}'`);
    this.prepare(true);
    this.appendTx!(runId, entries, head, fence);
  }

  /**
   * Group commit: every request in one transaction (one sync to disk), each under its own
   * savepoint, so a refused request (fence, newer schema, invalid entry) writes nothing and
   * the others still commit. Returns each request's error, or undefined when it was stored.
   * Throws only when the transaction itself fails (then nothing was written).
   */
  appendBatch(requests: readonly AppendRequest[]): (Error | undefined)[] {
    const checked = requests.map((r): Error | undefined => {
      try {
        checkRunId(r.runId);
        checkEntries(r.entries, `run '${r.runId}'`);
        checkHead(r.head, `run '${r.runId}'`);
        return undefined;
      } catch (error) {
        return error as Error;
      }
    });
    this.prepare(true);
    const valid = requests.filter((_, i) => checked[i] === undefined);
    const results = valid.length > 0 ? this.batchTx!(valid) : [];
    let next = 0;
    return checked.map((error) => error ?? results[next++]);
  }

  claim(runId: string, owner: string, ttlMs: number, options: ClaimOptions = {}): Lease {
    checkLeaseRequest(runId, owner, ttlMs);
    const db = this.prepare(true);
    const s = this.statements!;
    return db.transaction(() => {
      const now = this.now();
      const held = s.lease.get(runId);
      if (held && !mayClaim(held.owner, held.expires_at, owner, now, options)) throw new RunLocked(runId, { owner: held.owner, expiresAt: held.expires_at });
      s.putLease.run(runId, owner, now + ttlMs);
      return { runId, owner, expiresAt: now + ttlMs };
    }).immediate();
  }

  renew(runId: string, owner: string, ttlMs: number): Lease {
    checkLeaseRequest(runId, owner, ttlMs);
    const db = this.prepare(true);
    const s = this.statements!;
    return db.transaction(() => {
      const held = s.lease.get(runId);
      if (!held || held.owner !== owner) throw lostLease(runId, owner, held && { runId, owner: held.owner, expiresAt: held.expires_at });
      const expiresAt = this.now() + ttlMs;
      s.putLease.run(runId, owner, expiresAt);
      return { runId, owner, expiresAt };
    }).immediate();
  }

  release(runId: string, owner: string): void {
    if (!this.prepare(false)) return;
    this.statements!.releaseLease.run(runId, owner);
  }

  load(runId: string): StoredRun | undefined {
    const db = this.prepare(false);
    if (!db) return undefined;
    const s = this.statements!;
    // One read transaction: the head and the entries come from the same snapshot.
    return db.transaction(() => {
      const row = s.run.get(runId);
      if (!row) return undefined;
      const where = `${this.file.where}: run '${runId}'`;
      const schemaVersion = checkSchemaVersion(row.schema_version, CHECKPOINT_SCHEMA_VERSION, where);
      const head = this.head(row, where, schemaVersion);
      const entries: CheckpointEntry[] = [];
      for (const entry of s.entries.iterate(runId)) {
        const expected = entries.length + 1;
        if (entry.seq !== expected) {
          throw new UserError(`${where} is corrupt: entry ${expected} is missing (the next stored entry is ${entry.seq}).`);
        }
        entries.push(decodeEntry(entry.data, `${where} entry ${entry.seq}`, schemaVersion, entry.kind));
      }
      if (entries.length !== row.entry_count) {
        throw new UserError(`${where} is corrupt: its head records ${row.entry_count} entries but ${entries.length} are stored.`);
      }
      const lease = s.lease.get(runId);
      return { entries, head, schemaVersion, ...(lease ? { lease: { runId, owner: lease.owner, expiresAt: lease.expires_at } } : {}) };
    })();
  }

  list(options: ListRunsOptions = {}): RunSummary[] {
    if (!this.prepare(false)) return [];
    const statuses = statusFilter(options);
    const out: RunSummary[] = [];
    for (const row of this.statements!.list.iterate()) {
      const where = `${this.file.where}: run '${row.run_id}'`;
      const schemaVersion = checkSchemaVersion(row.schema_version, CHECKPOINT_SCHEMA_VERSION, where);
      const head = this.head(row, where, schemaVersion);
      if (statuses && !statuses.includes(head.status)) continue;
      const lease = row.lease_owner === null ? {} : { lease: { runId: row.run_id, owner: row.lease_owner, expiresAt: row.lease_expires_at! } };
      out.push({ runId: row.run_id, schemaVersion, head, entries: row.entry_count, createdAt: row.created_at, updatedAt: row.updated_at, ...lease });
    }
    return out;
  }

  /** Removes the run's entries and head in one transaction; returns whether it existed. */
  delete(runId: string): boolean {
    const db = this.prepare(false);
    if (!db) return false;
    const s = this.statements!;
    return db.transaction(() => {
      s.deleteEntries.run(runId);
      s.deleteLease.run(runId);
      return s.deleteRun.run(runId).changes > 0;
    }).immediate();
  }

  close(): void {
    this.statements = undefined;
    this.appendTx = undefined;
    this.batchTx = undefined;
    this.file.close();
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

  private prepare(create: true): SqliteDatabase;
  private prepare(create: boolean): SqliteDatabase | undefined;
  private prepare(create: boolean): SqliteDatabase | undefined {
    const db = this.file.open(create);
    if (!db || this.statements) return db;
    const s: Statements = {
      position: db.prepare('SELECT schema_version, entry_count FROM troupe_runs WHERE run_id = ?'),
      insertEntry: db.prepare('INSERT INTO troupe_entries (run_id, seq, kind, data) VALUES (?, ?, ?, ?)'),
      upsertHead: db.prepare(`
        INSERT INTO troupe_runs (run_id, schema_version, agent, turn, status, usage, output, error, entry_count, created_at, updated_at)
        VALUES (@runId, @version, @agent, @turn, @status, @usage, @output, @error, @count, @now, @now)
        ON CONFLICT (run_id) DO UPDATE SET
          agent = excluded.agent, turn = excluded.turn, status = excluded.status, usage = excluded.usage,
          output = excluded.output, error = excluded.error, entry_count = excluded.entry_count, updated_at = excluded.updated_at,
          schema_version = excluded.schema_version`),
      run: db.prepare('SELECT * FROM troupe_runs WHERE run_id = ?'),
      entries: db.prepare('SELECT seq, kind, data FROM troupe_entries WHERE run_id = ? ORDER BY seq'),
      list: db.prepare('SELECT r.*, l.owner AS lease_owner, l.expires_at AS lease_expires_at FROM troupe_runs r LEFT JOIN troupe_leases l ON l.run_id = r.run_id ORDER BY r.rowid'),
      deleteEntries: db.prepare('DELETE FROM troupe_entries WHERE run_id = ?'),
      deleteRun: db.prepare('DELETE FROM troupe_runs WHERE run_id = ?'),
      lease: db.prepare('SELECT owner, expires_at FROM troupe_leases WHERE run_id = ?'),
      putLease: db.prepare('INSERT INTO troupe_leases (run_id, owner, expires_at) VALUES (?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at'),
      deleteLease: db.prepare('DELETE FROM troupe_leases WHERE run_id = ?'),
      releaseLease: db.prepare('DELETE FROM troupe_leases WHERE run_id = ? AND owner = ?'),
    };
    const write = (runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead, fence: AppendFence | undefined): void => {
      const stored = s.position.get(runId);
      // An older-format run is upgraded by appending (its old entries still read); a newer one is refused.
      if (stored) checkSchemaVersion(stored.schema_version, CHECKPOINT_SCHEMA_VERSION, `${this.file.where}: run '${runId}'`);
      if (fence) {
        const held = s.lease.get(runId);
        checkFence(runId, fence, held && { runId, owner: held.owner, expiresAt: held.expires_at }, stored?.entry_count ?? 0, this.now());
      }
      let count = stored?.entry_count ?? 0;
      for (const entry of entries) {
        count += 1;
        s.insertEntry.run(runId, count, entry.kind, JSON.stringify(entry));
      }
      s.upsertHead.run({
        runId,
        version: CHECKPOINT_SCHEMA_VERSION,
        agent: head.agent,
        turn: head.turn,
        status: head.status,
        usage: JSON.stringify(head.usage),
        output: head.output ?? null,
        error: head.error ? JSON.stringify({ name: head.error.name, message: head.error.message }) : null,
        count,
        now: this.now(),
      });
    };
    const tx = db.transaction(write);
    // BEGIN IMMEDIATE: take the write lock up front, so two writers never deadlock on an upgrade.
    this.appendTx = (runId, entries, head, fence) => tx.immediate(runId, entries, head, fence);
    // A nested better-sqlite3 transaction is a savepoint: a refused request rolls back alone.
    const batch = db.transaction((requests: readonly AppendRequest[]) =>
      requests.map((r): Error | undefined => {
        try {
          tx(r.runId, r.entries, r.head, r.fence);
          return undefined;
        } catch (error) {
          return error instanceof Error ? error : new Error(String(error));
        }
      }),
    );
    this.batchTx = (requests) => batch.immediate(requests);
    this.statements = s;
    return db;
  }
}

export type { SqliteStoreOptions } from './sqlite-options.js';
