import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { MemoryCheckpointStore, type CheckpointEntry, type CheckpointStore } from '../../src/store/checkpoint-store.js';
import { SqliteCheckpointStore } from '../../src/store/sqlite-checkpoint-store.js';
import { expectUserError, head, input, reply, result, ticks, turnEnd, usage, useTempDir } from './store-helpers.js';

type SyncStore = MemoryCheckpointStore | SqliteCheckpointStore;

const tempDir = useTempDir();

const kinds: Array<[string, (now: () => number) => SyncStore]> = [
  ['MemoryCheckpointStore', (now) => new MemoryCheckpointStore({ now })],
  ['SqliteCheckpointStore', (now) => new SqliteCheckpointStore(join(tempDir(), 'runs.db'), { now })],
];

describe.each(kinds)('%s', (_name, make) => {
  it('is a CheckpointStore', () => {
    const store: CheckpointStore = make(ticks());
    expect(typeof store.append).toBe('function');
  });

  it('loads nothing for an unknown run and lists no runs when empty', () => {
    const store = make(ticks());
    expect(store.load('nope')).toBeUndefined();
    expect(store.list()).toEqual([]);
    expect(store.delete('nope')).toBe(false);
  });

  it('appends entries after the stored ones and replaces the head', () => {
    const store = make(ticks());
    store.append('r1', [input('hello')], head());
    store.append('r1', [reply(1, ['c1', 'c2'])], head({ turn: 1, usage: usage(3) }));
    store.append('r1', [result(1, 'c2'), result(1, 'c1')], head({ turn: 1, usage: usage(3) }));
    store.append('r1', [turnEnd(1)], head({ turn: 1, usage: usage(3), status: 'completed', output: 'done' }));
    expect(store.load('r1')).toEqual({
      entries: [input('hello'), reply(1, ['c1', 'c2']), result(1, 'c2'), result(1, 'c1'), turnEnd(1)],
      head: { agent: 'a', turn: 1, usage: usage(3), status: 'completed', output: 'done' },
      schemaVersion: 2,
    });
  });

  it('accepts an append with no entries (head only)', () => {
    const store = make(ticks());
    store.append('r1', [input()], head());
    store.append('r1', [], head({ status: 'failed', error: { name: 'BudgetExceeded', message: 'tool call count 3 exceeds budget 2' } }));
    expect(store.load('r1')).toEqual({
      entries: [input()],
      head: { agent: 'a', turn: 0, usage: usage(0), status: 'failed', error: { name: 'BudgetExceeded', message: 'tool call count 3 exceeds budget 2' } },
      schemaVersion: 2,
    });
    store.append('r2', [], head());
    expect(store.load('r2')).toEqual({ entries: [], head: head(), schemaVersion: 2 });
  });

  it('keeps runs apart', () => {
    const store = make(ticks());
    store.append('r1', [input('one')], head({ agent: 'x' }));
    store.append('r2', [input('two')], head({ agent: 'y' }));
    store.append('r1', [reply(1)], head({ agent: 'x', turn: 1 }));
    expect(store.load('r1')?.entries).toEqual([input('one'), reply(1)]);
    expect(store.load('r2')?.entries).toEqual([input('two')]);
    expect(store.load('r2')?.head.agent).toBe('y');
  });

  it('drops optional head fields that a later head does not carry', () => {
    const store = make(ticks());
    store.append('r1', [], head({ output: 'old', error: { name: 'E', message: 'm' } }));
    store.append('r1', [], head());
    expect(store.load('r1')?.head).toEqual(head());
  });

  it('returns a copy of the entry list: changing it does not change the store', () => {
    const store = make(ticks());
    store.append('r1', [input()], head());
    const loaded = store.load('r1')!;
    (loaded.entries as CheckpointEntry[]).push(turnEnd(9));
    expect(store.load('r1')?.entries).toEqual([input()]);
  });

  it('lists run heads oldest first, with entry counts and timestamps, filtered by status', () => {
    const store = make(ticks(100));
    store.append('b', [input(), reply(1)], head({ turn: 1 })); // t=100
    store.append('a', [input()], head()); // t=101
    store.append('b', [turnEnd(1)], head({ turn: 1, status: 'completed', output: 'ok' })); // t=102
    store.append('c', [], head({ status: 'interrupted' })); // t=103
    expect(store.list()).toEqual([
      { runId: 'b', schemaVersion: 2, head: head({ turn: 1, status: 'completed', output: 'ok' }), entries: 3, createdAt: 100, updatedAt: 102 },
      { runId: 'a', schemaVersion: 2, head: head(), entries: 1, createdAt: 101, updatedAt: 101 },
      { runId: 'c', schemaVersion: 2, head: head({ status: 'interrupted' }), entries: 0, createdAt: 103, updatedAt: 103 },
    ]);
    expect(store.list({ status: 'running' }).map((r) => r.runId)).toEqual(['a']);
    expect(store.list({ status: ['running', 'interrupted'] }).map((r) => r.runId)).toEqual(['a', 'c']);
    expect(store.list({ status: [] })).toEqual([]);
  });

  it('deletes a run (entries and head); a new run under that id starts from scratch', () => {
    const store = make(ticks(1));
    store.append('r1', [input('old'), reply(1)], head({ turn: 1 }));
    store.append('r2', [input('keep')], head());
    expect(store.delete('r1')).toBe(true);
    expect(store.load('r1')).toBeUndefined();
    expect(store.delete('r1')).toBe(false);
    store.append('r1', [input('new')], head());
    expect(store.load('r1')?.entries).toEqual([input('new')]);
    expect(store.load('r2')?.entries).toEqual([input('keep')]);
    expect(store.list().map((r) => [r.runId, r.entries, r.createdAt])).toEqual([
      ['r2', 1, 2],
      ['r1', 1, 3],
    ]);
  });

  it('refuses an invalid append with a UserError and stores nothing of it', () => {
    const store = make(ticks());
    store.append('r1', [input()], head());
    expectUserError(
      () => store.append('r1', [reply(1), { kind: 'turn_end' } as unknown as CheckpointEntry], head({ turn: 1 })),
      "Cannot append to run 'r1': entry 2 of this append is invalid: missing field 'turn'.",
    );
    expectUserError(
      () => store.append('r1', [{ kind: 'note', text: 'x' } as unknown as CheckpointEntry], head()),
      "Cannot append to run 'r1': entry 1 of this append is invalid: unknown entry kind \"note\".",
    );
    expectUserError(
      () => store.append('r1', [{ kind: 'reply', turn: 1, message: { role: 'user', content: 'x' } }], head()),
      "Cannot append to run 'r1': entry 1 of this append is invalid: field 'message.role' must be 'assistant', got \"user\".",
    );
    expectUserError(
      () => store.append('r1', [turnEnd(-1)], head()),
      "Cannot append to run 'r1': entry 1 of this append is invalid: field 'turn' must be a non-negative integer, got -1.",
    );
    expectUserError(
      () => store.append('r1', [turnEnd(1)], head({ status: 'paused' as never })),
      "Cannot append to run 'r1': the head is invalid: field 'status' must be one of running, suspended, completed, failed, interrupted, got \"paused\".",
    );
    expectUserError(
      () => store.append('r1', [turnEnd(1)], { ...head(), usage: { inputTokens: 1 } as never }),
      "Cannot append to run 'r1': the head is invalid: missing field 'usage.outputTokens'.",
    );
    expectUserError(() => store.append('', [input()], head()), 'A run id must be a non-empty string, got "".');
    expect(store.load('r1')).toEqual({ entries: [input()], head: head(), schemaVersion: 2 });
  });
});

describe('UserError from the stores', () => {
  it('is the errors.ts class, with its code', () => {
    const store = new MemoryCheckpointStore();
    const error = expectUserError(() => store.append('r', [{ kind: 'x' } as never], head()), 'Cannot append to run \'r\': entry 1 of this append is invalid: unknown entry kind "x".');
    expect(error.code).toBe('USER_ERROR');
    expect(error.name).toBe('UserError');
    expect(error).toBeInstanceOf(UserError);
  });
});
