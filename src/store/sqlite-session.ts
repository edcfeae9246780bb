import type { Statement } from 'better-sqlite3';
import { UserError } from '../errors.js';
import type { Message } from '../types.js';
import { SESSION_SCHEMA_VERSION, checkMessages, decodeSessionRun } from './format.js';
import { assertSameRun, checkIds, type Session } from './session.js';
import type { Component, SqliteStoreOptions } from './sqlite-options.js';
import { SqliteFile, type SqliteDatabase } from './sqlite.js';

/** Layout of the session tables (format.md, "Sessions"). */
export const SESSION_TABLES: Component = {
  name: 'sessions',
  version: 1,
  label: 'session store',
  create: `
    CREATE TABLE troupe_session_runs (
      session_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      position INTEGER NOT NULL,
      schema_version INTEGER NOT NULL,
      message_count INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      PRIMARY KEY (session_id, run_id)
    ) STRICT;
    CREATE UNIQUE INDEX troupe_session_runs_position ON troupe_session_runs (session_id, position);
    CREATE TABLE troupe_session_messages (
      session_id TEXT NOT NULL,
      position INTEGER NOT NULL,
      seq INTEGER NOT NULL,
      data TEXT NOT NULL,
      PRIMARY KEY (session_id, position, seq)
    ) STRICT, WITHOUT ROWID;
  `,
};

interface RunRow {
  run_id: string;
  position: number;
  schema_version: unknown;
  message_count: number;
}

interface Statements {
  run: Statement<[string, string], RunRow | undefined>;
  runs: Statement<[string], RunRow>;
  nextPosition: Statement<[string], { next: number }>;
  insertRun: Statement<[string, string, number, number, number, number]>;
  insertMessage: Statement<[string, number, number, string]>;
  messages: Statement<[string], { position: number; seq: number; data: unknown }>;
  runMessages: Statement<[string, number], { position: number; seq: number; data: unknown }>;
  clearRuns: Statement<[string]>;
  clearMessages: Statement<[string]>;
}

/**
 * Session memory in one SQLite file (better-sqlite3, WAL mode); it may share the file with a
 * SqliteCheckpointStore. Each `append` is one transaction.
 */
export class SqliteSession implements Session {
  private readonly file: SqliteFile;
  private readonly now: () => number;
  private statements: Statements | undefined;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.file = new SqliteFile(path, SESSION_TABLES, options);
    this.now = options.now ?? Date.now;
  }

  get path(): string {
    return this.file.path;
  }

  append(sessionId: string, runId: string, messages: readonly Message[]): boolean {
    checkIds(sessionId, runId);
    checkMessages(messages, `session '${sessionId}' run '${runId}'`);
    const db = this.prepare(true);
    const s = this.statements!;
    return db.transaction(() => {
      const stored = s.run.get(sessionId, runId);
      if (stored) {
        assertSameRun(this.readRun(sessionId, stored), messages, sessionId, runId);
        return false;
      }
      const position = s.nextPosition.get(sessionId)!.next;
      s.insertRun.run(sessionId, runId, position, SESSION_SCHEMA_VERSION, messages.length, this.now());
      messages.forEach((message, i) => s.insertMessage.run(sessionId, position, i + 1, JSON.stringify(message)));
      return true;
    }).immediate();
  }

  history(sessionId: string): Message[] {
    const db = this.prepare(false);
    if (!db) return [];
    const s = this.statements!;
    return db.transaction(() => {
      const runs = s.runs.all(sessionId);
      const out: Message[] = [];
      const rows = s.messages.iterate(sessionId);
      try {
        for (const run of runs) for (const message of this.decodeRun(sessionId, run, rows)) out.push(message);
        const extra = rows.next();
        if (!extra.done) {
          throw new UserError(`${this.file.where}: session '${sessionId}' is corrupt: message ${extra.value.seq} at position ${extra.value.position} belongs to no stored run.`);
        }
      } finally {
        rows.return?.();
      }
      return out;
    })();
  }

  clear(sessionId: string): void {
    const db = this.prepare(false);
    if (!db) return;
    const s = this.statements!;
    db.transaction(() => {
      s.clearMessages.run(sessionId);
      s.clearRuns.run(sessionId);
    }).immediate();
  }

  close(): void {
    this.statements = undefined;
    this.file.close();
  }

  private readRun(sessionId: string, run: RunRow): Message[] {
    const rows = this.statements!.runMessages.iterate(sessionId, run.position);
    try {
      const messages = this.decodeRun(sessionId, run, rows);
      if (!rows.next().done) throw this.tooMany(sessionId, run);
      return messages;
    } finally {
      rows.return?.();
    }
  }

  /** Reads one run's messages from `rows` (ordered by position, seq), checking none is missing. */
  private decodeRun(sessionId: string, run: RunRow, rows: Iterator<{ position: number; seq: number; data: unknown }>): Message[] {
    return decodeSessionRun(`${this.file.where}: session '${sessionId}' run '${run.run_id}'`, run, rows);
  }

  private tooMany(sessionId: string, run: RunRow): UserError {
    return new UserError(`${this.file.where}: session '${sessionId}' run '${run.run_id}' is corrupt: it holds more than the ${run.message_count} messages its row records.`);
  }

  private prepare(create: true): SqliteDatabase;
  private prepare(create: boolean): SqliteDatabase | undefined;
  private prepare(create: boolean): SqliteDatabase | undefined {
    const db = this.file.open(create);
    if (!db || this.statements) return db;
    this.statements = {
      run: db.prepare('SELECT run_id, position, schema_version, message_count FROM troupe_session_runs WHERE session_id = ? AND run_id = ?'),
      runs: db.prepare('SELECT run_id, position, schema_version, message_count FROM troupe_session_runs WHERE session_id = ? ORDER BY position'),
      nextPosition: db.prepare('SELECT COALESCE(MAX(position), 0) + 1 AS next FROM troupe_session_runs WHERE session_id = ?'),
      insertRun: db.prepare('INSERT INTO troupe_session_runs (session_id, run_id, position, schema_version, message_count, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
      insertMessage: db.prepare('INSERT INTO troupe_session_messages (session_id, position, seq, data) VALUES (?, ?, ?, ?)'),
      messages: db.prepare('SELECT position, seq, data FROM troupe_session_messages WHERE session_id = ? ORDER BY position, seq'),
      runMessages: db.prepare('SELECT position, seq, data FROM troupe_session_messages WHERE session_id = ? AND position = ? ORDER BY seq'),
      clearRuns: db.prepare('DELETE FROM troupe_session_runs WHERE session_id = ?'),
      clearMessages: db.prepare('DELETE FROM troupe_session_messages WHERE session_id = ?'),
    };
    return db;
  }
}
