/** The session contract, registered per store like contract.ts (memory, SQLite, PostgreSQL). */
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import type { Message } from '../../src/types.js';
import { expectRejects, type Harness } from './harnesses.js';

const user = (content: string): Message => ({ role: 'user', content });
const assistant = (content: string, calls: string[] = []): Message => ({
  role: 'assistant',
  content,
  toolCalls: calls.map((id) => ({ id, name: 'echo', arguments: '{}' })),
  agent: 'a',
});
const tool = (callId: string, content: string): Message => ({ role: 'tool', callId, name: 'echo', content, isError: false });

export function sessionContract(harness: Harness): void {
  const name = harness.name.replace('CheckpointStore', 'Session');
  describe.skipIf(harness.skip !== undefined)(`${name}: session contract${harness.skip ? ` (skipped: ${harness.skip})` : ''}`, () => {
    const fresh = async () => (await harness.sessions()).open();

    it('has an empty history for an unknown session and returns the appended runs in order', async () => {
      const session = await fresh();
      expect(await session.history('s')).toEqual([]);
      expect(await session.append('s', 'r1', [user('hi'), assistant('hello')])).toBe(true);
      expect(await session.append('s', 'r2', [user('add 2+3'), assistant('', ['c1']), tool('c1', '5'), assistant('5')])).toBe(true);
      expect(await session.history('s')).toEqual([user('hi'), assistant('hello'), user('add 2+3'), assistant('', ['c1']), tool('c1', '5'), assistant('5')]);
    });

    it('stores a run once: the same run id with the same messages changes nothing, with others is a UserError', async () => {
      const session = await fresh();
      await session.append('s', 'r1', [user('hi'), assistant('hello')]);
      await session.append('s', 'r2', [user('again')]);
      expect(await session.append('s', 'r1', [user('hi'), assistant('hello')])).toBe(false);
      // Same messages built with another key order and an explicit undefined: still the same run.
      expect(await session.append('s', 'r1', [{ content: 'hi', role: 'user' }, { agent: 'a', toolCalls: [], content: 'hello', role: 'assistant', reasoning: undefined }])).toBe(false);
      await expectRejects(
        () => session.append('s', 'r1', [user('hi'), assistant('bye')]),
        UserError,
        "Session 's' already holds run 'r1' with different messages (2 stored, 2 given); a run is stored once. Clear the session to store it again.",
      );
      await expectRejects(
        () => session.append('s', 'r1', [user('hi')]),
        UserError,
        "Session 's' already holds run 'r1' with different messages (2 stored, 1 given); a run is stored once. Clear the session to store it again.",
      );
      expect(await session.history('s')).toEqual([user('hi'), assistant('hello'), user('again')]);
    });

    it('returns a fresh array each time', async () => {
      const session = await fresh();
      await session.append('s', 'r1', [user('x')]);
      (await session.history('s')).push(user('y'));
      expect(await session.history('s')).toEqual([user('x')]);
    });

    it('keeps sessions apart, stores empty runs, and clear forgets one session only', async () => {
      const session = await fresh();
      await session.append('s1', 'r1', [user('one')]);
      await session.append('s2', 'r1', [user('two')]);
      expect(await session.append('s1', 'r0', [])).toBe(true);
      expect(await session.append('s1', 'r0', [])).toBe(false);
      expect(await session.history('s1')).toEqual([user('one')]);
      await session.clear('s1');
      await session.clear('never-existed');
      expect(await session.history('s1')).toEqual([]);
      expect(await session.append('s1', 'r1', [user('new')])).toBe(true);
      expect(await session.history('s1')).toEqual([user('new')]);
      expect(await session.history('s2')).toEqual([user('two')]);
    });

    it('refuses invalid messages and ids with a UserError and stores nothing', async () => {
      const session = await fresh();
      await expectRejects(
        () => session.append('s', 'r1', [user('ok'), { role: 'tool', callId: 'c', name: 'n', content: 'x' } as unknown as Message]),
        UserError,
        "Cannot append to session 's' run 'r1': message 2 is invalid: missing field 'isError'.",
      );
      await expectRejects(
        () => session.append('s', 'r1', [{ role: 'system', content: 'x' } as unknown as Message]),
        UserError,
        "Cannot append to session 's' run 'r1': message 1 is invalid: unknown message role \"system\".",
      );
      await expectRejects(() => session.append('', 'r1', []), UserError, 'A session id must be a non-empty string, got "".');
      await expectRejects(() => session.append('s', '', []), UserError, 'A run id must be a non-empty string, got "".');
      expect(await session.history('s')).toEqual([]);
      expect(await session.append('s', 'r1', [user('fine')])).toBe(true);
    });

    it('gives runs appended at once from two instances distinct places, each stored once', async () => {
      const backing = await harness.sessions();
      const [one, two] = [backing.open(), backing.open()];
      const stored = await Promise.all([
        ...[1, 2, 3].map(async (i) => one.append('s', `a${i}`, [user(`a${i}`)])),
        ...[1, 2, 3].map(async (i) => two.append('s', `b${i}`, [user(`b${i}`)])),
        (async () => two.append('s', 'a1', [user('a1')]))(),
      ]);
      expect(stored.filter(Boolean).length).toBe(6);
      const history = (await one.history('s')).map((m) => m.content).sort();
      expect(history).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
    });

    it.runIf(harness.raw)('a damaged message or a newer session schemaVersion is a UserError naming it', async () => {
      const backing = await harness.sessions();
      const session = backing.open();
      await session.append('s', 'r1', [user('a'), assistant('b')]);
      await session.append('s', 'r2', [user('c')]);
      await backing.sql!(`UPDATE troupe_session_messages SET data = '{"role":"assistant","content":"b"}' WHERE position = 1 AND seq = 2`);
      const message = `${backing.where}: session 's' run 'r1' message 2 is corrupt: missing field 'agent'.`;
      await expectRejects(() => session.history('s'), UserError, message);
      await expectRejects(() => session.append('s', 'r1', [user('a'), assistant('b')]), UserError, message);
      await backing.sql!('DELETE FROM troupe_session_messages WHERE position = 1 AND seq = 2');
      await expectRejects(() => session.history('s'), UserError, `${backing.where}: session 's' run 'r1' is corrupt: message 2 of 2 is missing.`);
      await backing.sql!("UPDATE troupe_session_runs SET schema_version = 2 WHERE run_id = 'r2'");
      await backing.sql!("UPDATE troupe_session_runs SET message_count = 1 WHERE run_id = 'r1'");
      await expectRejects(
        () => session.history('s'),
        UserError,
        `${backing.where}: session 's' run 'r2' uses session schemaVersion 2, but this version of troupe reads only up to 1; upgrade troupe to load it.`,
      );
    });
  });
}
