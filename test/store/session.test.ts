// The behaviour every session shares is in the session contract (contract.test.ts, session-contract.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteCheckpointStore } from '../../src/store/sqlite-checkpoint-store.js';
import { SqliteSession } from '../../src/store/sqlite-session.js';
import type { Message } from '../../src/types.js';
import { expectUserError, head, input, raw, useTempDir } from './store-helpers.js';

const tempDir = useTempDir();

const user = (content: string): Message => ({ role: 'user', content });
const assistant = (content: string, calls: string[] = []): Message => ({
  role: 'assistant',
  content,
  toolCalls: calls.map((id) => ({ id, name: 'echo', arguments: '{}' })),
  agent: 'a',
});

describe('SqliteSession', () => {
  it('creates its file on the first append and keeps sessions across instances', () => {
    const path = join(tempDir(), 'deep', 'sessions.db');
    const one = new SqliteSession(path);
    expect(one.history('s')).toEqual([]);
    one.clear('s');
    expect(existsSync(path)).toBe(false);
    one.append('s', 'r1', [user('hi')]);
    one.close();
    const two = new SqliteSession(path);
    expect(two.append('s', 'r1', [user('hi')])).toBe(false);
    two.append('s', 'r2', [user('more')]);
    expect(two.history('s')).toEqual([user('hi'), user('more')]);
    two.close();
    expectUserError(() => two.history('s'), `SQLite session store '${path}' is closed.`);
  });

  it('shares one file with a SqliteCheckpointStore', () => {
    const path = join(tempDir(), 'troupe.db');
    const store = new SqliteCheckpointStore(path);
    const session = new SqliteSession(path);
    store.append('r1', [input('hi')], head());
    session.append('s', 'r1', [user('hi'), assistant('hello')]);
    expect(store.load('r1')?.entries).toEqual([input('hi')]);
    expect(session.history('s')).toEqual([user('hi'), assistant('hello')]);
    const db = raw(path);
    expect(db.prepare('SELECT component, schema_version FROM troupe_meta ORDER BY component').all()).toEqual([
      { component: 'checkpoints', schema_version: 2 },
      { component: 'sessions', schema_version: 1 },
    ]);
    db.close();
    store.close();
    session.close();
  });

  function damaged(sql: string): { path: string; session: SqliteSession } {
    const path = join(tempDir(), 'sessions.db');
    const writer = new SqliteSession(path);
    writer.append('s', 'r1', [user('a'), assistant('b')]);
    writer.append('s', 'r2', [user('c')]);
    writer.close();
    const db = raw(path);
    db.exec(sql);
    db.close();
    return { path, session: new SqliteSession(path) };
  }

  it('a corrupt message is a UserError on history and on a repeated append', () => {
    const { path, session } = damaged(`UPDATE troupe_session_messages SET data = '{"role":"assistant","content":"b"}' WHERE position = 1 AND seq = 2`);
    const message = `SQLite session store '${path}': session 's' run 'r1' message 2 is corrupt: missing field 'agent'.`;
    expectUserError(() => session.history('s'), message);
    expectUserError(() => session.append('s', 'r1', [user('a'), assistant('b')]), message);
    // The statement is usable again afterwards.
    expectUserError(() => session.history('s'), message);
    session.close();
  });

  it('a missing or extra message is a UserError', () => {
    const missing = damaged('DELETE FROM troupe_session_messages WHERE position = 1 AND seq = 1');
    expectUserError(() => missing.session.history('s'), `SQLite session store '${missing.path}': session 's' run 'r1' is corrupt: message 1 of 2 is missing.`);
    missing.session.close();
    const extra = damaged(`INSERT INTO troupe_session_messages VALUES ('s', 2, 2, '{"role":"user","content":"d"}')`);
    expectUserError(() => extra.session.history('s'), `SQLite session store '${extra.path}': session 's' is corrupt: message 2 at position 2 belongs to no stored run.`);
    expectUserError(() => extra.session.append('s', 'r2', [user('c')]), `SQLite session store '${extra.path}': session 's' run 'r2' is corrupt: it holds more than the 1 messages its row records.`);
    extra.session.close();
  });

  it('a run with a newer session schemaVersion, or newer session tables, is a UserError', () => {
    const run = damaged("UPDATE troupe_session_runs SET schema_version = 2 WHERE run_id = 'r2'");
    expectUserError(
      () => run.session.history('s'),
      `SQLite session store '${run.path}': session 's' run 'r2' uses session schemaVersion 2, but this version of troupe reads only up to 1; upgrade troupe to load it.`,
    );
    run.session.close();
    const tables = damaged("UPDATE troupe_meta SET schema_version = 3 WHERE component = 'sessions'");
    expectUserError(
      () => tables.session.history('s'),
      `SQLite session store '${tables.path}' uses 'sessions' table layout version 3, but this version of troupe reads only up to 1; upgrade troupe to load it.`,
    );
    tables.session.close();
  });
});
