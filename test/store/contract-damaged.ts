/**
 * Damaged and newer records, for the stores whose storage a test can write behind their back
 * (SQLite, PostgreSQL; the SQL below runs on both): a UserError naming the store, run and
 * entry, never a crash or a skipped record, and nothing written.
 */
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { expectRejects, manualClock, type Harness } from './harnesses.js';
import { head, input, reply, result, turnEnd, usage } from './store-helpers.js';

export function damagedRecordContract(harness: Harness): void {
  // Memory keeps what it validated by reference: there is no storage to damage.
  if (!harness.raw) return;
  describe('damaged or newer records are a UserError naming the record', () => {
    /** A run r1 = input, reply(1, c1), result(1, c1), written at t = 1000, 1001, 1002. */
    async function storedRun() {
      const backing = await harness.checkpoints();
      const sql = backing.sql!;
      const clock = manualClock(1000);
      const store = backing.open(clock.now);
      await store.append('r1', [input()], head());
      clock.set(1001);
      await store.append('r1', [reply(1, ['c1'])], head({ turn: 1 }));
      clock.set(1002);
      await store.append('r1', [result(1, 'c1')], head({ turn: 1 }));
      return { store, sql, where: `${backing.where}: run 'r1'`, backing };
    }

    it('an entry that is not JSON (the SyntaxError is the cause); delete still removes the run', async () => {
      const run = await storedRun();
      await run.sql("UPDATE troupe_entries SET data = '{bad' WHERE seq = 2");
      let thrown: unknown;
      try {
        await run.store.load('r1');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(UserError);
      expect((thrown as Error).message.startsWith(`${run.where} entry 2 is corrupt: not valid JSON (`)).toBe(true);
      expect((thrown as Error).cause).toBeInstanceOf(SyntaxError);
      expect(await run.store.delete('r1')).toBe(true);
      expect(await run.store.load('r1')).toBeUndefined();
      await run.store.append('r1', [input('again')], head());
      expect((await run.store.load('r1'))?.entries).toEqual([input('again')]);
    });

    it('an unknown kind, a missing field, a kind column that disagrees', async () => {
      const run = await storedRun();
      await run.sql(`UPDATE troupe_entries SET kind = 'note', data = '{"kind":"note","text":"x"}' WHERE seq = 2`);
      await expectRejects(() => run.store.load('r1'), UserError, `${run.where} entry 2 is corrupt: unknown entry kind "note".`);
      await run.sql(`UPDATE troupe_entries SET kind = 'result', data = '{"kind":"result","turn":1,"message":{"role":"tool","callId":"c1","name":"echo","content":"x"}}' WHERE seq = 2`);
      await expectRejects(() => run.store.load('r1'), UserError, `${run.where} entry 2 is corrupt: missing field 'message.isError'.`);
      await run.sql(`UPDATE troupe_entries SET kind = 'handoff', data = '{"kind":"subrun_end","turn":1,"index":0,"callId":"c1","runId":"r1/1.0","status":"completed"}' WHERE seq = 2`);
      await expectRejects(() => run.store.load('r1'), UserError, `${run.where} entry 2 is corrupt: its kind column says "handoff" but the record says "subrun_end".`);
    });

    it('a missing entry, at the end or in the middle', async () => {
      const run = await storedRun();
      await run.sql('DELETE FROM troupe_entries WHERE seq = 3');
      await expectRejects(() => run.store.load('r1'), UserError, `${run.where} is corrupt: its head records 3 entries but 2 are stored.`);
      await run.sql('DELETE FROM troupe_entries WHERE seq = 1');
      await expectRejects(() => run.store.load('r1'), UserError, `${run.where} is corrupt: entry 1 is missing (the next stored entry is 2).`);
    });

    it('a damaged head, on load and on list', async () => {
      const run = await storedRun();
      await run.sql("UPDATE troupe_runs SET status = 'paused'");
      const status = `${run.where} head is corrupt: field 'status' must be one of running, suspended, completed, failed, cancelled, got "paused".`;
      await expectRejects(() => run.store.load('r1'), UserError, status);
      await expectRejects(() => run.store.list(), UserError, status);
      await run.sql(`UPDATE troupe_runs SET status = 'running', usage = '{"inputTokens":1}'`);
      await expectRejects(() => run.store.load('r1'), UserError, `${run.where} head is corrupt: missing field 'usage.outputTokens'.`);
      await run.sql(`UPDATE troupe_runs SET usage = '${JSON.stringify(usage(1))}', error = '{"name":"E"}'`);
      await expectRejects(() => run.store.load('r1'), UserError, `${run.where} head is corrupt: missing field 'error.message'.`);
    });

    it("format 4 and older said 'interrupted' for a cancelled run: it reads as 'cancelled' (head, subrun_end, list filter); format 5 refuses it", async () => {
      const run = await storedRun();
      await run.store.append('r1', [{ kind: 'subrun_end', turn: 1, index: 0, callId: 'c1', runId: 'r1/1.0', status: 'cancelled' }], head({ turn: 1 }));
      await run.sql(`UPDATE troupe_runs SET schema_version = 4, status = 'interrupted'`);
      await run.sql(`UPDATE troupe_entries SET data = '{"kind":"subrun_end","turn":1,"index":0,"callId":"c1","runId":"r1/1.0","status":"interrupted"}' WHERE seq = 4`);
      const loaded = await run.store.load('r1');
      expect([loaded!.schemaVersion, loaded!.head.status, loaded!.entries[3]]).toEqual([4, 'cancelled', { kind: 'subrun_end', turn: 1, index: 0, callId: 'c1', runId: 'r1/1.0', status: 'cancelled' }]);
      expect((await run.store.list({ status: 'cancelled' })).map((r) => [r.runId, r.head.status])).toEqual([['r1', 'cancelled']]);
      expect(await run.store.list({ status: ['running', 'completed'] })).toEqual([]);
      await run.sql('UPDATE troupe_runs SET schema_version = 5');
      await expectRejects(() => run.store.load('r1'), UserError, `${run.where} head is corrupt: field 'status' must be one of running, suspended, completed, failed, cancelled, got "interrupted".`);
    });

    it('a run of a newer schemaVersion: load, list and append refuse it and write nothing', async () => {
      const run = await storedRun();
      await run.sql('UPDATE troupe_runs SET schema_version = 7');
      const message = `${run.where} uses checkpoint schemaVersion 7, but this version of troupe reads only up to 6; upgrade troupe to load it.`;
      await expectRejects(() => run.store.load('r1'), UserError, message);
      await expectRejects(() => run.store.list(), UserError, message);
      await expectRejects(() => run.store.append('r1', [turnEnd(1)], head({ turn: 1 })), UserError, message);
      await run.sql('UPDATE troupe_runs SET schema_version = 6');
      expect((await run.store.list()).map((r) => [r.entries, r.updatedAt])).toEqual([[3, 1002]]);
      await run.sql('UPDATE troupe_runs SET schema_version = 0');
      await expectRejects(() => run.store.load('r1'), UserError, `${run.where} is corrupt: its checkpoint schemaVersion must be a positive integer, got 0.`);
    });

    it('tables of a newer layout version', async () => {
      const run = await storedRun();
      const layout = run.backing.layout!;
      await run.sql(`UPDATE troupe_meta SET schema_version = ${layout + 1} WHERE component = 'checkpoints'`);
      await expectRejects(
        () => run.backing.open().load('r1'),
        UserError,
        `${run.backing.where} uses 'checkpoints' table layout version ${layout + 1}, but this version of troupe reads only up to ${layout}; upgrade troupe to load it.`,
      );
    });
  });
}
