/**
 * The checkpoint store contract, registered for one store at a time (contract.test.ts runs it
 * on memory, SQLite and PostgreSQL). Every store method is awaited, so sync and async stores
 * are held to the same assertions.
 */
import { describe, expect, it } from 'vitest';
import { RunLocked, UserError } from '../../src/errors.js';
import type { CheckpointEntry } from '../../src/store/checkpoint-store.js';
import { damagedRecordContract } from './contract-damaged.js';
import { leaseContract } from './contract-leases.js';
import { expectRejects, manualClock, type Harness } from './harnesses.js';
import { head, input, reply, result, turnEnd, usage } from './store-helpers.js';

const HASH = 'a'.repeat(64);

/** One entry of every kind, with every optional field set, plus an unknown extra field that must be kept. */
export const EVERY_KIND: readonly CheckpointEntry[] = [
  { kind: 'input', message: { role: 'user', content: 'q' }, source: 'steer', id: 'steer-1' },
  { kind: 'input', message: { role: 'user', content: 'later' }, source: 'follow_up' },
  { kind: 'reply', turn: 1, message: { role: 'assistant', content: 'hm', reasoning: 'think', toolCalls: [{ id: 'c1', name: 'pay', arguments: '{"n":1}' }], agent: 'a' } },
  { kind: 'approval_request', turn: 1, index: 0, callId: 'c1', approvalId: 'r1:1.0', tool: 'pay', argsHash: HASH, requestedAt: 5 },
  { kind: 'approval_decision', approvalId: 'r1:1.0', callId: 'c1', argsHash: HASH, approved: false, reason: 'no', by: 'ana', decidedAt: 6 },
  { kind: 'approval_decision', approvalId: 'r1:1.0', callId: 'c1', argsHash: HASH, approved: true, editedArguments: '{"n":2}', editedArgsHash: HASH, by: 'ana', decidedAt: 7 },
  { kind: 'wait_request', waitId: 'r1:1.0', waitKind: 'event', turn: 1, index: 0, callId: 'c1', tool: 'pay', detail: { name: 'paid' }, requestedAt: 8, deadline: 60_008 },
  { kind: 'wait_resolution', waitId: 'r1:1.0', waitKind: 'event', callId: 'c1', ended: 'resolved', resolution: { amount: 5 }, by: 'signal', resolvedAt: 9 },
  { kind: 'wait_request', waitId: 'r1:1.1', waitKind: 'question', turn: 1, index: 1, callId: 'c2', tool: 'ask_human', detail: { question: 'Which?', options: ['a', 'b'], multiSelect: false }, requestedAt: 10 },
  { kind: 'wait_resolution', waitId: 'r1:1.1', waitKind: 'question', callId: 'c2', ended: 'timedOut', resolvedAt: 11 },
  { kind: 'wait_request', waitId: 'r1:1.2', waitKind: 'timer', turn: 1, index: 2, callId: 'c3', tool: 'sleep', detail: { until: 99 }, requestedAt: 12, deadline: 99 },
  { kind: 'wait_resolution', waitId: 'r1:1.2', waitKind: 'timer', callId: 'c3', ended: 'resolved', resolution: { at: 99 }, by: 'clock', resolvedAt: 99 },
  { kind: 'subrun_start', turn: 1, index: 0, callId: 'c1', runId: 'r1/1.0' },
  { kind: 'subrun_end', turn: 1, index: 0, callId: 'c1', runId: 'r1/1.0', status: 'suspended' },
  { kind: 'result', turn: 1, message: { role: 'tool', callId: 'c1', name: 'pay', content: 'x', isError: true }, terminate: true },
  { kind: 'handoff', turn: 1, from: 'a', to: 'b' },
  { kind: 'turn_end', turn: 1, note: 'kept' } as unknown as CheckpointEntry,
];

/** A malformed entry of each newer kind and the exact refusal. */
const MALFORMED: ReadonlyArray<[string, unknown, string]> = [
  ['input source', { kind: 'input', message: { role: 'user', content: 'q' }, source: 'radio' }, "field 'source' must be one of input, mailbox, steer, follow_up, hook, repair, got \"radio\""],
  ['handoff', { kind: 'handoff', turn: 1, from: 'a' }, "missing field 'to'"],
  ['approval_request', { kind: 'approval_request', turn: 1, index: 0, callId: 'c', approvalId: 'x', tool: 't', argsHash: 'abc', requestedAt: 1 }, "field 'argsHash' must be 64 lower-case hex digits"],
  ['approval_decision', { kind: 'approval_decision', approvalId: 'x', callId: 'c', argsHash: HASH, approved: 'yes', decidedAt: 1 }, "field 'approved' must be a boolean, got \"yes\""],
  ['approval_decision edits without their hash', { kind: 'approval_decision', approvalId: 'x', callId: 'c', argsHash: HASH, approved: true, editedArguments: '{}', decidedAt: 1 }, "missing field 'editedArgsHash'"],
  ['approval_decision edits on a denial', { kind: 'approval_decision', approvalId: 'x', callId: 'c', argsHash: HASH, approved: false, editedArguments: '{}', editedArgsHash: HASH, decidedAt: 1 }, "field 'editedArguments' is only allowed on an approval (approved: true)"],
  ['approval_decision edits that are not text', { kind: 'approval_decision', approvalId: 'x', callId: 'c', argsHash: HASH, approved: true, editedArguments: { n: 1 }, editedArgsHash: HASH, decidedAt: 1 }, "field 'editedArguments' must be a string, got an object"],
  ['wait_request of an unknown kind', { kind: 'wait_request', waitId: 'w', waitKind: 'poll', turn: 1, index: 0, callId: 'c', tool: 't', detail: {}, requestedAt: 1 }, "field 'waitKind' must be one of question, event, timer, got \"poll\""],
  ['wait_request without its event name', { kind: 'wait_request', waitId: 'w', waitKind: 'event', turn: 1, index: 0, callId: 'c', tool: 't', detail: {}, requestedAt: 1 }, "field 'detail' needs a non-empty string 'name'"],
  ['wait_resolution of a question that is not an answer', { kind: 'wait_resolution', waitId: 'w', waitKind: 'question', callId: 'c', ended: 'resolved', resolution: 5, resolvedAt: 1 }, "field 'resolution' must be a string, an array of strings, or an object of them (a form; null for a cancelled question)"],
  ['wait_resolution of a form with an answer that is a number', { kind: 'wait_resolution', waitId: 'w', waitKind: 'question', callId: 'c', ended: 'resolved', resolution: { a: 5 }, resolvedAt: 1 }, "field 'resolution' must be a string, an array of strings, or an object of them (a form; null for a cancelled question)"],
  ['wait_request of a form that repeats a key', { kind: 'wait_request', waitId: 'w', waitKind: 'question', turn: 1, index: 0, callId: 'c', tool: 't', detail: { question: 'T', multiSelect: false, form: [{ key: 'a', question: 'x', multiSelect: false }, { key: 'a', question: 'y', multiSelect: false }] }, requestedAt: 1 }, "field 'detail' has form question 2 without a unique non-empty string 'key'"],
  ['extra that is not an object', { kind: 'extra', value: [1] }, "field 'value' must be an object, got an array"],
  ['abort without its reason', { kind: 'abort', turn: 2, abortedAt: 1 }, "missing field 'reason'"],
  ['wait_resolution that neither resolved nor timed out', { kind: 'wait_resolution', waitId: 'w', waitKind: 'timer', callId: 'c', ended: 'maybe', resolvedAt: 1 }, "field 'ended' must be resolved or timedOut, got \"maybe\""],
  ['subrun_start', { kind: 'subrun_start', turn: 1, index: -1, callId: 'c', runId: 'r/1.0' }, "field 'index' must be a non-negative integer, got -1"],
  ['subrun_end', { kind: 'subrun_end', turn: 1, index: 0, callId: 'c', runId: 'r/1.0', status: 'done' }, "field 'status' must be one of running, suspended, completed, failed, cancelled, got \"done\""],
  ['result terminate', { kind: 'result', turn: 1, message: { role: 'tool', callId: 'c', name: 'n', content: 'x', isError: false }, terminate: 1 }, "field 'terminate' must be a boolean, got 1"],
];

export function checkpointStoreContract(harness: Harness): void {
  describe.skipIf(harness.skip !== undefined)(`${harness.name}: checkpoint store contract${harness.skip ? ` (skipped: ${harness.skip})` : ''}`, () => {
    const fresh = async (now?: () => number) => (await harness.checkpoints()).open(now);

    it('loads nothing for an unknown run and lists no runs when empty', async () => {
      const store = await fresh();
      expect(await store.load('nope')).toBeUndefined();
      expect(await store.list()).toEqual([]);
      expect(await store.delete('nope')).toBe(false);
    });

    it('appends entries after the stored ones and replaces the head', async () => {
      const store = await fresh();
      await store.append('r1', [input('hello')], head());
      await store.append('r1', [reply(1, ['c1', 'c2'])], head({ turn: 1, usage: usage(3) }));
      await store.append('r1', [result(1, 'c2'), result(1, 'c1')], head({ turn: 1, usage: usage(3) }));
      await store.append('r1', [turnEnd(1)], head({ turn: 1, usage: usage(3), status: 'completed', output: 'done' }));
      expect(await store.load('r1')).toEqual({
        entries: [input('hello'), reply(1, ['c1', 'c2']), result(1, 'c2'), result(1, 'c1'), turnEnd(1)],
        head: { agent: 'a', turn: 1, usage: usage(3), status: 'completed', output: 'done' },
        schemaVersion: 6,
      });
    });

    it('accepts an append with no entries (head only), also as the first append', async () => {
      const store = await fresh();
      await store.append('r1', [input()], head());
      const error = { name: 'BudgetExceeded', message: 'tool call count 3 exceeds budget 2' };
      await store.append('r1', [], head({ status: 'failed', error }));
      expect(await store.load('r1')).toEqual({ entries: [input()], head: head({ status: 'failed', error }), schemaVersion: 6 });
      await store.append('r2', [], head());
      expect(await store.load('r2')).toEqual({ entries: [], head: head(), schemaVersion: 6 });
    });

    it('keeps runs apart and drops optional head fields a later head does not carry', async () => {
      const store = await fresh();
      await store.append('r1', [input('one')], head({ agent: 'x', output: 'old', error: { name: 'E', message: 'm' } }));
      await store.append('r2', [input('two')], head({ agent: 'y' }));
      await store.append('r1', [reply(1)], head({ agent: 'x', turn: 1 }));
      expect(await store.load('r1')).toEqual({ entries: [input('one'), reply(1)], head: head({ agent: 'x', turn: 1 }), schemaVersion: 6 });
      expect(await store.load('r2')).toEqual({ entries: [input('two')], head: head({ agent: 'y' }), schemaVersion: 6 });
    });

    it('returns a copy of the entry list: changing it does not change the store', async () => {
      const store = await fresh();
      await store.append('r1', [input()], head());
      const loaded = (await store.load('r1'))!;
      (loaded.entries as CheckpointEntry[]).push(turnEnd(9));
      expect((await store.load('r1'))?.entries).toEqual([input()]);
    });

    it('continues one sequence when two instances append to the same run', async () => {
      const backing = await harness.checkpoints();
      const one = backing.open();
      const two = backing.open();
      await one.append('r1', [input()], head());
      await two.append('r1', [reply(1, ['a', 'b'])], head({ turn: 1 }));
      await one.append('r1', [result(1, 'b')], head({ turn: 1 }));
      await two.append('r1', [result(1, 'a'), turnEnd(1)], head({ turn: 1, status: 'completed' }));
      expect(await one.load('r1')).toEqual(await two.load('r1'));
      expect((await one.load('r1'))?.entries).toEqual([input(), reply(1, ['a', 'b']), result(1, 'b'), result(1, 'a'), turnEnd(1)]);
    });

    it('lists run heads oldest first, with entry counts and timestamps, filtered by status', async () => {
      const clock = manualClock(100);
      const store = await fresh(clock.now);
      await store.append('b', [input(), reply(1)], head({ turn: 1 }));
      clock.set(101);
      await store.append('a', [input()], head());
      clock.set(102);
      await store.append('b', [turnEnd(1)], head({ turn: 1, status: 'completed', output: 'ok' }));
      clock.set(103);
      await store.append('c', [], head({ status: 'cancelled' }));
      clock.set(104);
      await store.append('d', [], head({ status: 'suspended' }));
      expect(await store.list()).toEqual([
        { runId: 'b', schemaVersion: 6, head: head({ turn: 1, status: 'completed', output: 'ok' }), entries: 3, createdAt: 100, updatedAt: 102 },
        { runId: 'a', schemaVersion: 6, head: head(), entries: 1, createdAt: 101, updatedAt: 101 },
        { runId: 'c', schemaVersion: 6, head: head({ status: 'cancelled' }), entries: 0, createdAt: 103, updatedAt: 103 },
        { runId: 'd', schemaVersion: 6, head: head({ status: 'suspended' }), entries: 0, createdAt: 104, updatedAt: 104 },
      ]);
      expect((await store.list({ status: 'running' })).map((r) => r.runId)).toEqual(['a']);
      expect((await store.list({ status: 'suspended' })).map((r) => r.runId)).toEqual(['d']);
      expect((await store.list({ status: ['running', 'cancelled'] })).map((r) => r.runId)).toEqual(['a', 'c']);
      expect(await store.list({ status: [] })).toEqual([]);
    });

    it('deletes a run with its entries, head and lease; a new run under that id starts from scratch', async () => {
      const clock = manualClock(1);
      const store = await fresh(clock.now);
      await store.append('r1', [input('old'), reply(1)], head({ turn: 1 }));
      clock.set(2);
      await store.append('r2', [input('keep')], head());
      await store.claim('r1', 'A', 1000);
      expect(await store.delete('r1')).toBe(true);
      expect(await store.load('r1')).toBeUndefined();
      expect(await store.delete('r1')).toBe(false);
      clock.set(3);
      // The lease went with the run: another owner may claim it at once.
      expect(await store.claim('r1', 'B', 1000)).toEqual({ runId: 'r1', owner: 'B', expiresAt: 1003 });
      await store.append('r1', [input('new')], head());
      expect((await store.load('r1'))?.entries).toEqual([input('new')]);
      expect((await store.load('r2'))?.entries).toEqual([input('keep')]);
      expect((await store.list()).map((r) => [r.runId, r.entries, r.createdAt, r.lease?.owner])).toEqual([
        ['r2', 1, 2, undefined],
        ['r1', 1, 3, 'B'],
      ]);
    });

    it('refuses an invalid append with a UserError and stores nothing of it', async () => {
      const store = await fresh();
      await store.append('r1', [input()], head());
      const refusals: Array<[CheckpointEntry[], ReturnType<typeof head>, string]> = [
        [[reply(1), { kind: 'turn_end' } as unknown as CheckpointEntry], head({ turn: 1 }), "entry 2 of this append is invalid: missing field 'turn'."],
        [[{ kind: 'note', text: 'x' } as unknown as CheckpointEntry], head(), 'entry 1 of this append is invalid: unknown entry kind "note".'],
        [[{ kind: 'reply', turn: 1, message: { role: 'user', content: 'x' } }], head(), "entry 1 of this append is invalid: field 'message.role' must be 'assistant', got \"user\"."],
        [[turnEnd(-1)], head(), "entry 1 of this append is invalid: field 'turn' must be a non-negative integer, got -1."],
        [[turnEnd(1)], head({ status: 'paused' as never }), "the head is invalid: field 'status' must be one of running, suspended, completed, failed, cancelled, got \"paused\"."],
        [[turnEnd(1)], { ...head(), usage: { inputTokens: 1 } as never }, "the head is invalid: missing field 'usage.outputTokens'."],
      ];
      for (const [entries, h, message] of refusals) await expectRejects(() => store.append('r1', entries, h), UserError, `Cannot append to run 'r1': ${message}`);
      await expectRejects(() => store.append('', [input()], head()), UserError, 'A run id must be a non-empty string, got "".');
      expect(await store.load('r1')).toEqual({ entries: [input()], head: head(), schemaVersion: 6 });
    });

    it('round-trips every entry kind and a suspended head exactly, extra fields included', async () => {
      const store = await fresh();
      await store.append('r1', EVERY_KIND.slice(0, 4), head({ turn: 1, status: 'suspended' }));
      await store.append('r1', EVERY_KIND.slice(4), head({ turn: 1, agent: 'b', status: 'suspended' }));
      expect(await store.load('r1')).toEqual({ entries: EVERY_KIND, head: head({ turn: 1, agent: 'b', status: 'suspended' }), schemaVersion: 6 });
      expect(JSON.stringify((await store.load('r1'))!.entries)).toBe(JSON.stringify(EVERY_KIND));
    });

    it.each(MALFORMED)('refuses a malformed %s entry with a UserError, writing nothing', async (_kind, entry, issue) => {
      const store = await fresh();
      await store.append('r1', [input()], head());
      await expectRejects(() => store.append('r1', [turnEnd(1), entry as CheckpointEntry], head({ turn: 1 })), UserError, `Cannot append to run 'r1': entry 2 of this append is invalid: ${issue}.`);
      expect(await store.load('r1')).toEqual({ entries: [input()], head: head(), schemaVersion: 6 });
    });

    leaseContract(harness);

    it('an append fenced against another owner reports that owner (RunLocked is the errors.ts class)', async () => {
      const clock = manualClock(0);
      const store = await fresh(clock.now);
      await store.claim('r1', 'B', 60_000);
      const error = await expectRejects(
        () => store.append('r1', [input()], head(), { owner: 'A', seq: 0 }),
        RunLocked,
        "Run 'r1' is locked by 'B' until 1970-01-01T00:01:00.000Z; nothing was written. Wait for the lease to expire or stop the other process.",
      );
      expect([error.code, error.name, error.runId, error.owner, error.expiresAt]).toEqual(['RUN_LOCKED', 'RunLocked', 'r1', 'B', 60_000]);
      expect(await store.load('r1')).toBeUndefined();
    });

    damagedRecordContract(harness);
  });
}
