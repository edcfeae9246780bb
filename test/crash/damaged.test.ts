import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteCheckpointStore } from '../../src/entry/sqlite.js';
import { marks, outcome, run, workspace, type FixtureConfig } from './crash-helpers.js';

const ws = workspace('damaged');
afterAll(() => ws.cleanup());

/** A crashed run (one result stored, one call open) written through the store, then damaged with raw SQL. */
function storedRun(db: string, runId: string, damage: string): void {
  const store = new SqliteCheckpointStore(db);
  store.append(
    runId,
    [
      { kind: 'input', message: { role: 'user', content: 'go' } },
      { kind: 'reply', turn: 1, message: { role: 'assistant', content: '', agent: 'batcher', toolCalls: [{ id: 'c1', name: 'work', arguments: '{"n":1}' }, { id: 'c2', name: 'work', arguments: '{"n":2}' }] } },
      { kind: 'result', turn: 1, message: { role: 'tool', callId: 'c1', name: 'work', content: 'work c1 done', isError: false } },
    ],
    { agent: 'batcher', turn: 1, usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, requests: 1 }, status: 'running' },
  );
  store.close();
  const raw = new Database(db);
  raw.exec(damage);
  raw.pragma('wal_checkpoint(TRUNCATE)');
  raw.close();
}

/**
 * Every stored row of the runs and their entries, and the leases apart: the refused resume
 * claims the lease before it reads (and gives it back), so the file's bytes may change there.
 */
function snapshot(db: string): { rows: unknown; leases: unknown } {
  const raw = new Database(db);
  raw.pragma('wal_checkpoint(TRUNCATE)');
  const rows = { runs: raw.prepare('SELECT * FROM troupe_runs ORDER BY run_id').all(), entries: raw.prepare('SELECT * FROM troupe_entries ORDER BY run_id, seq').all() };
  const leases = raw.prepare('SELECT * FROM troupe_leases').all();
  raw.close();
  return { rows, leases };
}

async function resumeRefused(name: string, damage: string, message: RegExp): Promise<void> {
  const base: FixtureConfig = { scenario: 'batch', calls: 2, phase: 'resume', mode: 'resume', db: ws.file(`${name}.sqlite`), marks: ws.file(`${name}.marks`), runId: name };
  storedRun(base.db, name, damage);
  const before = snapshot(base.db);
  const refused = await run(base);
  expect(refused.code).toBe(3);
  expect(outcome(refused).error).toMatchObject({ name: 'UserError' });
  expect(outcome(refused).error!.message).toMatch(message);
  expect(refused.lines.filter((l) => l.event).map((l) => l.event!.type)).toEqual(['run_started', 'run_failed']);
  expect(marks(base.marks)).toEqual([]);
  const after = snapshot(base.db);
  expect(after.rows).toEqual(before.rows);
  expect(after.leases).toEqual([]);
  // Loading it again gives the same error: nothing was repaired or overwritten.
  const store = new SqliteCheckpointStore(base.db);
  expect(() => store.load(name)).toThrow(message);
  store.close();
}

describe('damaged and newer-schema records (real process, real SQLite)', { timeout: 90_000 }, () => {
  it('a damaged entry gives a UserError on resume and the stored rows are unchanged', async () => {
    await resumeRefused('damaged', `UPDATE troupe_entries SET data = '{"kind":"result", "turn":' WHERE run_id = 'damaged' AND seq = (SELECT MAX(seq) FROM troupe_entries WHERE run_id = 'damaged')`, /: run 'damaged' entry 3 is corrupt: not valid JSON \(Unexpected end of JSON input\)\.$/);
  });

  it('a record of a newer schema version gives a UserError naming the upgrade and is left unchanged', async () => {
    await resumeRefused('newer', `UPDATE troupe_runs SET schema_version = 99 WHERE run_id = 'newer'`, /: run 'newer' uses checkpoint schemaVersion 99, but this version of troupe reads only up to 6; upgrade troupe to load it\./);
  });
});
