import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { PostgresRunBus } from '../../src/store/postgres-bus.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { POSTGRES_URL, adminQuery, expectRejects, shownUrl, usePostgresSchema } from './harnesses.js';
import { head, input } from './store-helpers.js';

describe(`PostgresRunBus`, () => {
  const freshSchema = usePostgresSchema();
  const opened: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const item of opened.splice(0)) await item.close();
  });
  const bus = (schema: string) => {
    const b = new PostgresRunBus(POSTGRES_URL!, { schema, now: () => 5_000 });
    opened.push(b);
    return b;
  };

  it('keeps messages per run in send order until the run is finished; applied ones are marked, not removed', async () => {
    const schema = await freshSchema();
    const b = bus(schema);
    const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema });
    opened.push(store);
    const first = await b.send('r1', { kind: 'steer', text: 'hello' });
    const second = await b.send('r1', { kind: 'approve', approvalId: 'r1:k1', approved: false, reason: 'no', by: 'ann' });
    await b.send('r2', { kind: 'cancel' });
    expect(second.id).toBeGreaterThan(first.id);
    expect(await b.messages('r1')).toEqual([
      { id: first.id, runId: 'r1', message: { kind: 'steer', text: 'hello' }, sentAt: 5_000, appliedAt: undefined },
      { id: second.id, runId: 'r1', message: { kind: 'approve', approvalId: 'r1:k1', approved: false, reason: 'no', by: 'ann' }, sentAt: 5_000, appliedAt: undefined },
    ]);
    await b.markApplied([first.id]);
    expect((await b.messages('r1')).map((m) => m.appliedAt)).toEqual([5_000, undefined]);
    // Not finished (not stored, then running): nothing is cleared.
    expect(await b.clearFinished('r1')).toBe(0);
    await store.append('r1', [input()], head());
    expect(await b.clearFinished('r1')).toBe(0);
    await store.append('r1', [], head({ status: 'completed', output: 'ok' }));
    expect(await b.clearFinished('r1')).toBe(2);
    expect(await b.messages('r1')).toEqual([]);
    expect((await b.messages('r2')).length).toBe(1);
  });

  it('stores events in order, reads them after a cursor in pages, and announces each batch to listeners', async () => {
    const schema = await freshSchema();
    const b = bus(schema);
    const heard: string[] = [];
    const stop = await b.listen({ events: (runId) => heard.push(`events:${runId}`), message: (runId) => heard.push(`message:${runId}`), work: (runId) => heard.push(`work:${runId}`) });
    await b.publish('r1', [
      { type: 'run_started', runId: 'r1' },
      { type: 'turn_started', runId: 'r1' },
    ] as never);
    await b.publish('r1', [{ type: 'run_completed', runId: 'r1' }] as never);
    await b.send('r1', { kind: 'cancel' });
    const all = await b.events('r1');
    expect(all.map((e) => e.event.type)).toEqual(['run_started', 'turn_started', 'run_completed']);
    expect(all.every((e, i) => i === 0 || e.id > all[i - 1]!.id)).toBe(true);
    expect((await b.events('r1', all[0]!.id)).map((e) => e.event.type)).toEqual(['turn_started', 'run_completed']);
    expect((await b.events('r1', 0, 1)).map((e) => e.event.type)).toEqual(['run_started']);
    expect(await b.events('other')).toEqual([]);
    // Notices arrive in commit order on the listening connection.
    for (let i = 0; heard.length < 4 && i < 200; i++) await new Promise((r) => setTimeout(r, 10));
    expect(heard).toEqual(['events:r1', 'events:r1', 'message:r1', 'work:r1']);
    await stop();
  });

  it('on a schema that was not migrated refuses every use, naming the command, and creates nothing', async () => {
    const schema = await freshSchema(false);
    const b = bus(schema);
    const hint = `PostgreSQL run bus '${shownUrl(POSTGRES_URL!)}' schema '${schema}' has no troupe checkpoints tables: run \`troupe db migrate --db '${shownUrl(POSTGRES_URL!)}' --schema ${schema}\` first (troupe never creates tables on its own).`;
    await expectRejects(() => b.send('r1', { kind: 'cancel' }), UserError, hint);
    await expectRejects(() => b.events('r1'), UserError, hint);
    await expectRejects(() => b.listen({}), UserError, hint);
    expect(await adminQuery('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).toEqual([]);
  });

  it('refuses malformed messages before writing, and names a corrupt stored message', async () => {
    const schema = await freshSchema();
    const b = bus(schema);
    const bad: Array<[unknown, string]> = [
      [null, 'A run message must be an object, got null.'],
      [{ kind: 'pause' }, `A run message has kind 'approve', 'cancel', 'steer', 'signal' or 'answer', got {"kind":"pause"}.`],
      [{ kind: 'approve', approvalId: '', approved: true }, 'A run message of kind approve needs a non-empty approvalId, got {"kind":"approve","approvalId":"","approved":true}.'],
      [{ kind: 'approve', approvalId: 'a:1', approved: 'yes' }, 'A run message of kind approve needs approved: boolean, got {"kind":"approve","approvalId":"a:1","approved":"yes"}.'],
      [{ kind: 'steer', text: '' }, 'A run message of kind steer needs a non-empty text, got {"kind":"steer","text":""}.'],
      [{ kind: 'cancel', reason: 3 }, 'A run message has a string reason, got {"kind":"cancel","reason":3}.'],
    ];
    for (const [message, text] of bad) await expectRejects(() => b.send('r1', message as never), UserError, text);
    expect(await adminQuery(`SELECT count(*)::int AS n FROM "${schema}".troupe_messages`)).toEqual([{ n: 0 }]);
    await adminQuery(`INSERT INTO "${schema}".troupe_messages (run_id, kind, body, sent_at) VALUES ('r1', 'steer', '{"text": 7}', 1)`);
    const id = (await adminQuery<{ id: string }>(`SELECT id FROM "${schema}".troupe_messages`))[0]!.id;
    await expectRejects(
      () => b.messages('r1'),
      UserError,
      `PostgreSQL run bus '${shownUrl(POSTGRES_URL!)}' schema '${schema}': message ${id} of run 'r1' is corrupt: A run message of kind steer needs a non-empty text, got {"kind":"steer","text":7}.`,
    );
  });
});
