import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { SqliteCheckpointStore } from '../../src/store/sqlite-checkpoint-store.js';
import { expectUserError, head, input, raw, reply, result, ticks, turnEnd, usage, useTempDir } from './store-helpers.js';

const tempDir = useTempDir();
const opened: SqliteCheckpointStore[] = [];
afterEach(() => {
  for (const store of opened.splice(0)) store.close();
});

/** A store holding run r1 = input, reply(1, c1), result(1, c1); closed again, ready to be damaged. */
function storedRun(): { path: string; reopen: () => SqliteCheckpointStore } {
  const path = join(tempDir(), 'runs.db');
  const store = new SqliteCheckpointStore(path, { now: ticks() });
  store.append('r1', [input()], head());
  store.append('r1', [reply(1, ['c1'])], head({ turn: 1 }));
  store.append('r1', [result(1, 'c1')], head({ turn: 1 }));
  store.close();
  return {
    path,
    reopen: () => {
      const reopened = new SqliteCheckpointStore(path);
      opened.push(reopened);
      return reopened;
    },
  };
}

function damage(path: string, sql: string, ...params: unknown[]): void {
  const db = raw(path);
  db.prepare(sql).run(...params);
  db.close();
}

describe('SqliteCheckpointStore: the file', () => {
  it('is created with its folders on the first append, not by reads', () => {
    const path = join(tempDir(), 'a', 'b', 'runs.db');
    const store = new SqliteCheckpointStore(path);
    expect(store.path).toBe(path);
    expect(store.load('r1')).toBeUndefined();
    expect(store.list()).toEqual([]);
    expect(store.delete('r1')).toBe(false);
    expect(existsSync(join(tempDir(), 'a'))).toBe(false);
    expect(existsSync(path)).toBe(false);
    store.append('r1', [input()], head());
    expect(existsSync(path)).toBe(true);
    store.close();
  });

  it('is in WAL mode, with the versioned tables', () => {
    const { path } = storedRun();
    const db = raw(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.prepare('SELECT component, schema_version FROM troupe_meta').all()).toEqual([{ component: 'checkpoints', schema_version: 2 }]);
    expect(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all()).toEqual(['troupe_entries', 'troupe_leases', 'troupe_meta', 'troupe_runs']);
    expect(db.prepare('SELECT run_id, seq, kind FROM troupe_entries').all()).toEqual([
      { run_id: 'r1', seq: 1, kind: 'input' },
      { run_id: 'r1', seq: 2, kind: 'reply' },
      { run_id: 'r1', seq: 3, kind: 'result' },
    ]);
    expect(db.prepare('SELECT run_id, schema_version, agent, turn, status, usage, output, error, entry_count, created_at, updated_at FROM troupe_runs').all()).toEqual([
      { run_id: 'r1', schema_version: 6, agent: 'a', turn: 1, status: 'running', usage: JSON.stringify(usage(0)), output: null, error: null, entry_count: 3, created_at: 1000, updated_at: 1002 },
    ]);
    db.close();
  });

  it('keeps runs across instances (reopened file)', () => {
    const { reopen } = storedRun();
    const store = reopen();
    expect(store.load('r1')?.entries).toEqual([input(), reply(1, ['c1']), result(1, 'c1')]);
    store.append('r1', [turnEnd(1)], head({ turn: 1, status: 'completed', output: 'ok' }));
    store.close();
    const again = reopen();
    expect(again.load('r1')).toEqual({
      entries: [input(), reply(1, ['c1']), result(1, 'c1'), turnEnd(1)],
      head: head({ turn: 1, status: 'completed', output: 'ok' }),
      schemaVersion: 6,
    });
    again.close();
  });

  it('works on ":memory:" and with synchronous "normal"', () => {
    const memory = new SqliteCheckpointStore(':memory:');
    memory.append('r1', [input()], head());
    expect(memory.load('r1')?.entries).toEqual([input()]);
    memory.close();
    const path = join(tempDir(), 'n.db');
    const normal = new SqliteCheckpointStore(path, { synchronous: 'normal' });
    normal.append('r1', [input()], head());
    normal.close();
    const reopened = new SqliteCheckpointStore(path);
    expect(reopened.load('r1')?.entries).toEqual([input()]);
    reopened.close();
  });

  it('refuses use after close', () => {
    const { reopen } = storedRun();
    const store = reopen();
    store.close();
    store.close();
    expectUserError(() => store.load('r1'), `SQLite checkpoint store '${store.path}' is closed.`);
    expectUserError(() => store.append('r1', [], head()), `SQLite checkpoint store '${store.path}' is closed.`);
    expectUserError(() => store.list(), `SQLite checkpoint store '${store.path}' is closed.`);
  });
});

describe('SqliteCheckpointStore: append-only writes', () => {
  it('inserts each new entry once and never updates or deletes a stored entry; the head row is upserted', () => {
    const path = join(tempDir(), 'runs.db');
    const store = new SqliteCheckpointStore(path);
    store.append('r1', [input()], head());
    // Record every write to the tables from now on (triggers live in the file, so they see the store's connection).
    const db = raw(path);
    db.exec(`
      CREATE TABLE audit (op TEXT, tbl TEXT, seq INTEGER);
      CREATE TRIGGER e_ins AFTER INSERT ON troupe_entries BEGIN INSERT INTO audit VALUES ('insert', 'entries', NEW.seq); END;
      CREATE TRIGGER e_upd AFTER UPDATE ON troupe_entries BEGIN INSERT INTO audit VALUES ('update', 'entries', OLD.seq); END;
      CREATE TRIGGER e_del AFTER DELETE ON troupe_entries BEGIN INSERT INTO audit VALUES ('delete', 'entries', OLD.seq); END;
      CREATE TRIGGER r_ins AFTER INSERT ON troupe_runs BEGIN INSERT INTO audit VALUES ('insert', 'runs', NEW.entry_count); END;
      CREATE TRIGGER r_upd AFTER UPDATE ON troupe_runs BEGIN INSERT INTO audit VALUES ('update', 'runs', NEW.entry_count); END;
      CREATE TRIGGER r_del AFTER DELETE ON troupe_runs BEGIN INSERT INTO audit VALUES ('delete', 'runs', OLD.entry_count); END;
    `);
    for (let turn = 1; turn <= 3; turn++) {
      store.append('r1', [reply(turn, ['c'])], head({ turn }));
      store.append('r1', [result(turn, 'c')], head({ turn }));
      store.append('r1', [turnEnd(turn)], head({ turn }));
    }
    store.append('r1', [], head({ turn: 3, status: 'completed', output: 'x' }));
    const audit = db.prepare('SELECT op, tbl, seq FROM audit').raw().all();
    const expected: unknown[] = [];
    for (let seq = 2; seq <= 10; seq++) expected.push(['insert', 'entries', seq], ['update', 'runs', seq]);
    expected.push(['update', 'runs', 10]);
    expect(audit).toEqual(expected);
    db.close();
    store.close();
  });

  it('writes one append in one transaction: a failure part-way stores none of it and keeps the old head', () => {
    const path = join(tempDir(), 'runs.db');
    const store = new SqliteCheckpointStore(path);
    store.append('r1', [input()], head());
    const db = raw(path);
    db.exec("CREATE TRIGGER boom BEFORE INSERT ON troupe_entries WHEN NEW.seq = 3 BEGIN SELECT RAISE(ABORT, 'disk says no'); END;");
    db.close();
    expect(() => store.append('r1', [reply(1, ['c1']), result(1, 'c1')], head({ turn: 1, usage: usage(5) }))).toThrow('disk says no');
    expect(store.load('r1')).toEqual({ entries: [input()], head: head(), schemaVersion: 6 });
    store.append('r1', [reply(1)], head({ turn: 1 }));
    expect(store.load('r1')?.entries).toEqual([input(), reply(1)]);
    store.close();
  });

  it('continues the sequence when two connections append to the same run', () => {
    const path = join(tempDir(), 'runs.db');
    const one = new SqliteCheckpointStore(path);
    const two = new SqliteCheckpointStore(path);
    one.append('r1', [input()], head());
    two.append('r1', [reply(1, ['a', 'b'])], head({ turn: 1 }));
    one.append('r1', [result(1, 'b')], head({ turn: 1 }));
    two.append('r1', [result(1, 'a'), turnEnd(1)], head({ turn: 1, status: 'completed' }));
    expect(one.load('r1')).toEqual(two.load('r1'));
    expect(one.load('r1')?.entries).toEqual([input(), reply(1, ['a', 'b']), result(1, 'b'), result(1, 'a'), turnEnd(1)]);
    expect(one.list()[0]?.entries).toBe(5);
    one.close();
    two.close();
  });
});

describe('SqliteCheckpointStore: damaged or newer files are a UserError, never a crash or a skipped record', () => {
  it('an entry that is not JSON', () => {
    const { path, reopen } = storedRun();
    damage(path, "UPDATE troupe_entries SET data = '{bad' WHERE seq = 2");
    let thrown: unknown;
    try {
      reopen().load('r1');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UserError);
    const error = thrown as UserError;
    expect(error.message.startsWith(`SQLite checkpoint store '${path}': run 'r1' entry 2 is corrupt: not valid JSON (`)).toBe(true);
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('an unknown entry kind', () => {
    const { path, reopen } = storedRun();
    damage(path, `UPDATE troupe_entries SET kind = 'note', data = '{"kind":"note","text":"x"}' WHERE seq = 2`);
    expectUserError(() => reopen().load('r1'), `SQLite checkpoint store '${path}': run 'r1' entry 2 is corrupt: unknown entry kind "note".`);
  });

  it('an entry with a missing field', () => {
    const { path, reopen } = storedRun();
    damage(path, `UPDATE troupe_entries SET data = '{"kind":"reply","turn":1}' WHERE seq = 2`);
    expectUserError(() => reopen().load('r1'), `SQLite checkpoint store '${path}': run 'r1' entry 2 is corrupt: missing field 'message'.`);
    damage(path, `UPDATE troupe_entries SET data = '{"kind":"result","turn":1,"message":{"role":"tool","callId":"c1","name":"echo","content":"x"}}' WHERE seq = 2`);
    expectUserError(() => reopen().load('r1'), `SQLite checkpoint store '${path}': run 'r1' entry 2 is corrupt: missing field 'message.isError'.`);
  });

  it('an entry whose kind column disagrees with its record', () => {
    const { path, reopen } = storedRun();
    damage(path, "UPDATE troupe_entries SET kind = 'result' WHERE seq = 2");
    expectUserError(() => reopen().load('r1'), `SQLite checkpoint store '${path}': run 'r1' entry 2 is corrupt: its kind column says "result" but the record says "reply".`);
  });

  it('a missing entry, in the middle or at the end', () => {
    const { path, reopen } = storedRun();
    damage(path, 'DELETE FROM troupe_entries WHERE seq = 3');
    expectUserError(() => reopen().load('r1'), `SQLite checkpoint store '${path}': run 'r1' is corrupt: its head records 3 entries but 2 are stored.`);
    damage(path, 'DELETE FROM troupe_entries WHERE seq = 1');
    expectUserError(() => reopen().load('r1'), `SQLite checkpoint store '${path}': run 'r1' is corrupt: entry 1 is missing (the next stored entry is 2).`);
  });

  it('a damaged head', () => {
    const { path, reopen } = storedRun();
    damage(path, "UPDATE troupe_runs SET status = 'paused'");
    expectUserError(
      () => reopen().load('r1'),
      `SQLite checkpoint store '${path}': run 'r1' head is corrupt: field 'status' must be one of running, suspended, completed, failed, cancelled, got "paused".`,
    );
    expectUserError(
      () => reopen().list(),
      `SQLite checkpoint store '${path}': run 'r1' head is corrupt: field 'status' must be one of running, suspended, completed, failed, cancelled, got "paused".`,
    );
    damage(path, `UPDATE troupe_runs SET status = 'running', usage = '{"inputTokens":1}'`);
    expectUserError(() => reopen().load('r1'), `SQLite checkpoint store '${path}': run 'r1' head is corrupt: missing field 'usage.outputTokens'.`);
    damage(path, `UPDATE troupe_runs SET usage = 'nope'`);
    expect(() => reopen().load('r1')).toThrow(`SQLite checkpoint store '${path}': run 'r1' head usage is corrupt: not valid JSON (`);
    damage(path, `UPDATE troupe_runs SET usage = ?, error = '{"name":"E"}'`, JSON.stringify(usage(1)));
    expectUserError(() => reopen().load('r1'), `SQLite checkpoint store '${path}': run 'r1' head is corrupt: missing field 'error.message'.`);
  });

  it('a run written with a newer schemaVersion: load, list and append refuse it and write nothing', () => {
    const { path, reopen } = storedRun();
    damage(path, 'UPDATE troupe_runs SET schema_version = 7');
    const message = `SQLite checkpoint store '${path}': run 'r1' uses checkpoint schemaVersion 7, but this version of troupe reads only up to 6; upgrade troupe to load it.`;
    const store = reopen();
    expectUserError(() => store.load('r1'), message);
    expectUserError(() => store.list(), message);
    expectUserError(() => store.append('r1', [turnEnd(1)], head({ turn: 1 })), message);
    const db = raw(path);
    expect(db.prepare('SELECT count(*) FROM troupe_entries').pluck().get()).toBe(3);
    expect(db.prepare('SELECT updated_at FROM troupe_runs').pluck().get()).toBe(1002);
    db.close();
    damage(path, 'UPDATE troupe_runs SET schema_version = 0');
    expectUserError(() => reopen().load('r1'), `SQLite checkpoint store '${path}': run 'r1' is corrupt: its checkpoint schemaVersion must be a positive integer, got 0.`);
  });

  it('a file whose tables have a newer layout version', () => {
    const { path, reopen } = storedRun();
    damage(path, "UPDATE troupe_meta SET schema_version = 3 WHERE component = 'checkpoints'");
    expectUserError(
      () => reopen().load('r1'),
      `SQLite checkpoint store '${path}' uses 'checkpoints' table layout version 3, but this version of troupe reads only up to 2; upgrade troupe to load it.`,
    );
  });

  it('a file that is not a SQLite database', () => {
    const path = join(tempDir(), 'notes.txt');
    writeFileSync(path, 'these are not the tables you are looking for'.repeat(100));
    const error = expectUserError(() => new SqliteCheckpointStore(path).load('r1'), `Cannot open SQLite checkpoint store '${path}': file is not a database.`);
    expect((error.cause as { code?: string }).code).toBe('SQLITE_NOTADB');
  });
});
