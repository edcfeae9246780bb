import { UserError } from '../errors.js';
import type { Message } from '../types.js';
import { SESSION_SCHEMA_VERSION, checkMessages, decodeSessionRun } from './format.js';
import { PostgresDatabase, type Query } from './postgres.js';
import { POSTGRES_SESSIONS, inSchema } from './postgres-layout.js';
import type { PostgresConnection, PostgresStoreOptions } from './postgres-options.js';
import { assertSameRun, checkIds, type Session } from './session.js';

interface RunRow {
  run_id: string;
  position: number;
  schema_version: unknown;
  message_count: number;
}

interface MessageRow {
  position: number;
  seq: number;
  data: unknown;
}

/**
 * Session memory on PostgreSQL, same contract as MemorySession and SqliteSession. Each
 * `append` is one transaction, serialised per session by an advisory lock so concurrent
 * appends from several processes get distinct positions. Needs `troupe db migrate`.
 * Every method may throw StoreUnavailable and UserError as PostgresCheckpointStore does.
 */
export class PostgresSession implements Session {
  private readonly db: PostgresDatabase;
  private readonly now: () => number;

  constructor(connection: PostgresConnection, options: PostgresStoreOptions = {}) {
    this.db = new PostgresDatabase(connection, POSTGRES_SESSIONS.label, POSTGRES_SESSIONS, options);
    this.now = options.now ?? Date.now;
  }

  get where(): string {
    return this.db.where;
  }

  async append(sessionId: string, runId: string, messages: readonly Message[]): Promise<boolean> {
    checkIds(sessionId, runId);
    checkMessages(messages, `session '${sessionId}' run '${runId}'`);
    return this.db.transaction(async (q) => {
      await q('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`troupe/${this.db.schema}/session/${sessionId}`]);
      const stored = (await q<RunRow>(this.sql('SELECT run_id, position, schema_version, message_count FROM {s}.troupe_session_runs WHERE session_id = $1 AND run_id = $2'), [sessionId, runId]))[0];
      if (stored) {
        const rows = await q<MessageRow>(this.sql('SELECT position, seq, data FROM {s}.troupe_session_messages WHERE session_id = $1 AND position = $2 ORDER BY seq'), [sessionId, stored.position]);
        const iterator = rows[Symbol.iterator]();
        const held = this.decodeRun(sessionId, stored, iterator);
        if (!iterator.next().done) throw new UserError(`${this.db.where}: session '${sessionId}' run '${runId}' is corrupt: it holds more than the ${stored.message_count} messages its row records.`);
        assertSameRun(held, messages, sessionId, runId);
        return false;
      }
      await this.insert(q, sessionId, runId, messages);
      return true;
    });
  }

  async history(sessionId: string): Promise<Message[]> {
    return this.db.transaction(async (q) => {
      const runs = await q<RunRow>(this.sql('SELECT run_id, position, schema_version, message_count FROM {s}.troupe_session_runs WHERE session_id = $1 ORDER BY position'), [sessionId]);
      const rows = (await q<MessageRow>(this.sql('SELECT position, seq, data FROM {s}.troupe_session_messages WHERE session_id = $1 ORDER BY position, seq'), [sessionId]))[Symbol.iterator]();
      const out: Message[] = [];
      for (const run of runs) for (const message of this.decodeRun(sessionId, run, rows)) out.push(message);
      const extra = rows.next();
      if (!extra.done) throw new UserError(`${this.db.where}: session '${sessionId}' is corrupt: message ${extra.value.seq} at position ${extra.value.position} belongs to no stored run.`);
      return out;
    }, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  async clear(sessionId: string): Promise<void> {
    await this.db.transaction(async (q) => {
      await q(this.sql('DELETE FROM {s}.troupe_session_messages WHERE session_id = $1'), [sessionId]);
      await q(this.sql('DELETE FROM {s}.troupe_session_runs WHERE session_id = $1'), [sessionId]);
    });
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  private async insert(q: Query, sessionId: string, runId: string, messages: readonly Message[]): Promise<void> {
    const next = await q<{ next: number }>(this.sql('SELECT COALESCE(MAX(position), 0) + 1 AS next FROM {s}.troupe_session_runs WHERE session_id = $1'), [sessionId]);
    const position = next[0]!.next;
    await q(
      this.sql('INSERT INTO {s}.troupe_session_runs (session_id, run_id, position, schema_version, message_count, created_at) VALUES ($1, $2, $3, $4, $5, $6)'),
      [sessionId, runId, position, SESSION_SCHEMA_VERSION, messages.length, this.now()],
    );
    if (messages.length === 0) return;
    await q(
      this.sql('INSERT INTO {s}.troupe_session_messages (session_id, position, seq, data) SELECT $1, $2, t.n, t.data FROM unnest($3::text[]) WITH ORDINALITY AS t(data, n)'),
      [sessionId, position, messages.map((message) => JSON.stringify(message))],
    );
  }

  /** Reads one run's messages from `rows` (ordered by position, seq), checking none is missing. */
  private decodeRun(sessionId: string, run: RunRow, rows: Iterator<MessageRow>): Message[] {
    return decodeSessionRun(`${this.db.where}: session '${sessionId}' run '${run.run_id}'`, run, rows);
  }

  private sql(text: string): string {
    return inSchema(text, this.db.s);
  }
}
