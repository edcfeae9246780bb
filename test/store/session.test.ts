import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemorySession, type Session } from '../../src/store/session.js';
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
const tool = (callId: string, content: string): Message => ({ role: 'tool', callId, name: 'echo', content, isError: false });

const kinds: Array<[string, () => MemorySession | SqliteSession]> = [
  ['MemorySession', () => new MemorySession()],
  ['SqliteSession', () => new SqliteSession(join(tempDir(), 'sessions.db'))],
];

describe.each(kinds)('%s', (_name, make) => {
  it('is a Session with an empty history for an unknown session', () => {
    const session: Session = make();
    expect(session.history('s')).toEqual([]);
  });

  it('returns the messages of the appended runs, in order', () => {
    const session = make();
    expect(session.append('s', 'r1', [user('hi'), assistant('hello')])).toBe(true);
    expect(session.append('s', 'r2', [user('add 2+3'), assistant('', ['c1']), tool('c1', '5'), assistant('5')])).toBe(true);
    expect(session.history('s')).toEqual([user('hi'), assistant('hello'), user('add 2+3'), assistant('', ['c1']), tool('c1', '5'), assistant('5')]);
  });

  it('stores a run once: appending the same run id again changes nothing', () => {
    const session = make();
    session.append('s', 'r1', [user('hi'), assistant('hello')]);
    session.append('s', 'r2', [user('again')]);
    expect(session.append('s', 'r1', [user('hi'), assistant('hello')])).toBe(false);
    // Same messages built with another key order and an explicit undefined: still the same run.
    expect(session.append('s', 'r1', [{ content: 'hi', role: 'user' }, { agent: 'a', toolCalls: [], content: 'hello', role: 'assistant', reasoning: undefined }])).toBe(false);
    expect(session.history('s')).toEqual([user('hi'), assistant('hello'), user('again')]);
  });

  it('refuses the same run id with different messages (no silent loss, no overwrite)', () => {
    const session = make();
    session.append('s', 'r1', [user('hi'), assistant('hello')]);
    expectUserError(
      () => session.append('s', 'r1', [user('hi'), assistant('bye')]),
      "Session 's' already holds run 'r1' with different messages (2 stored, 2 given); a run is stored once. Clear the session to store it again.",
    );
    expectUserError(
      () => session.append('s', 'r1', [user('hi')]),
      "Session 's' already holds run 'r1' with different messages (2 stored, 1 given); a run is stored once. Clear the session to store it again.",
    );
    expect(session.history('s')).toEqual([user('hi'), assistant('hello')]);
  });

  it('keeps sessions apart; the same run id may be in two sessions', () => {
    const session = make();
    session.append('s1', 'r1', [user('one')]);
    session.append('s2', 'r1', [user('two')]);
    session.append('s1', 'r2', [user('three')]);
    expect(session.history('s1')).toEqual([user('one'), user('three')]);
    expect(session.history('s2')).toEqual([user('two')]);
  });

  it('stores a run with no messages (it still counts as stored)', () => {
    const session = make();
    expect(session.append('s', 'r0', [])).toBe(true);
    expect(session.append('s', 'r0', [])).toBe(false);
    session.append('s', 'r1', [user('x')]);
    expect(session.history('s')).toEqual([user('x')]);
  });

  it('clear forgets the session only; its runs may be appended again', () => {
    const session = make();
    session.append('s', 'r1', [user('old')]);
    session.append('other', 'r1', [user('kept')]);
    session.clear('s');
    session.clear('never-existed');
    expect(session.history('s')).toEqual([]);
    expect(session.append('s', 'r1', [user('new')])).toBe(true);
    expect(session.history('s')).toEqual([user('new')]);
    expect(session.history('other')).toEqual([user('kept')]);
  });

  it('returns a fresh array each time', () => {
    const session = make();
    session.append('s', 'r1', [user('x')]);
    session.history('s').push(user('y'));
    expect(session.history('s')).toEqual([user('x')]);
  });

  it('refuses invalid messages and ids with a UserError and stores nothing', () => {
    const session = make();
    expectUserError(
      () => session.append('s', 'r1', [user('ok'), { role: 'tool', callId: 'c', name: 'n', content: 'x' } as unknown as Message]),
      "Cannot append to session 's' run 'r1': message 2 is invalid: missing field 'isError'.",
    );
    expectUserError(
      () => session.append('s', 'r1', [{ role: 'system', content: 'x' } as unknown as Message]),
      "Cannot append to session 's' run 'r1': message 1 is invalid: unknown message role \"system\".",
    );
    expectUserError(() => session.append('', 'r1', []), 'A session id must be a non-empty string, got "".');
    expectUserError(() => session.append('s', '', []), 'A run id must be a non-empty string, got "".');
    expect(session.history('s')).toEqual([]);
    expect(session.append('s', 'r1', [user('fine')])).toBe(true);
  });
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
