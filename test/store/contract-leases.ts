/** The lease and fencing part of the checkpoint store contract (registered by contract.ts). */
import { expect, it } from 'vitest';
import { RunLocked, UserError } from '../../src/errors.js';
import { expectRejects, lease, manualClock, type Harness } from './harnesses.js';
import { head, input, reply, turnEnd } from './store-helpers.js';

const lockedBy = (runId: string, owner: string, expiresAt: number) =>
  `Run '${runId}' is locked by '${owner}' until ${new Date(expiresAt).toISOString()}; nothing was written. Wait for the lease to expire or stop the other process.`;
const notLeased = (runId: string, owner: string) => `Run '${runId}' is not leased to '${owner}' (no lease is held); nothing was written.`;
const movedOn = (runId: string, stored: number, expected: number) => `Run '${runId}' moved on: ${stored} entries are stored but its writer expected ${expected}; nothing was written.`;

export function leaseContract(harness: Harness): void {
  const fresh = async (now?: () => number) => (await harness.checkpoints()).open(now);

  it('claims a run before its first append; load and list show the lease', async () => {
    const clock = manualClock(0);
    const store = await fresh(clock.now);
    expect(await store.claim('r1', 'A', 1000)).toEqual(lease('r1', 'A', 1000));
    await store.append('r1', [input()], head(), { owner: 'A', seq: 0 });
    expect(await store.load('r1')).toEqual({ entries: [input()], head: head(), schemaVersion: 6, lease: lease('r1', 'A', 1000) });
    expect((await store.list()).map((r) => r.lease)).toEqual([lease('r1', 'A', 1000)]);
  });

  it('refuses a second owner with RunLocked naming the holder; the holder re-claims to extend', async () => {
    const clock = manualClock(0);
    const store = await fresh(clock.now);
    await store.claim('r1', 'A', 1000);
    clock.set(999);
    const error = await expectRejects(() => store.claim('r1', 'B', 1000), RunLocked, lockedBy('r1', 'A', 1000));
    expect([error.owner, error.expiresAt]).toEqual(['A', 1000]);
    expect(await store.claim('r1', 'A', 1000)).toEqual(lease('r1', 'A', 1999));
    await store.append('r1', [input()], head(), { owner: 'A', seq: 0 });
    expect((await store.load('r1'))?.lease).toEqual(lease('r1', 'A', 1999));
  });

  it('lets another owner take over an expired lease; the old owner can then neither append nor renew', async () => {
    const clock = manualClock(0);
    const store = await fresh(clock.now);
    await store.claim('r1', 'A', 1000);
    await store.append('r1', [input()], head(), { owner: 'A', seq: 0 });
    clock.set(1000);
    expect(await store.claim('r1', 'B', 1000)).toEqual(lease('r1', 'B', 2000));
    await expectRejects(() => store.append('r1', [reply(1)], head({ turn: 1 }), { owner: 'A', seq: 1 }), RunLocked, lockedBy('r1', 'B', 2000));
    await expectRejects(() => store.renew('r1', 'A', 1000), RunLocked, lockedBy('r1', 'B', 2000));
    await store.release('r1', 'A');
    expect(await store.load('r1')).toEqual({ entries: [input()], head: head(), schemaVersion: 6, lease: lease('r1', 'B', 2000) });
    await store.append('r1', [reply(1)], head({ turn: 1 }), { owner: 'B', seq: 1 });
    expect((await store.load('r1'))?.entries).toEqual([input(), reply(1)]);
  });

  it('takeOverFrom takes an unexpired lease from exactly that holder, for good: the old owner can no longer append, renew, release or claim it', async () => {
    const clock = manualClock(0);
    const store = await fresh(clock.now);
    await store.claim('r1', 'A', 1000);
    await store.append('r1', [input()], head(), { owner: 'A', seq: 0 });
    clock.set(10);
    // Another holder is named: nothing is taken.
    await expectRejects(() => store.claim('r1', 'B', 1000, { takeOverFrom: 'C' }), RunLocked, lockedBy('r1', 'A', 1000));
    expect(await store.claim('r1', 'B', 1000, { takeOverFrom: 'A' })).toEqual(lease('r1', 'B', 1010));
    await expectRejects(() => store.append('r1', [reply(1)], head({ turn: 1 }), { owner: 'A', seq: 1 }), RunLocked, lockedBy('r1', 'B', 1010));
    await expectRejects(() => store.renew('r1', 'A', 1000), RunLocked, lockedBy('r1', 'B', 1010));
    await expectRejects(() => store.claim('r1', 'A', 1000), RunLocked, lockedBy('r1', 'B', 1010));
    await store.release('r1', 'A');
    // A second claimant that also proved A dead comes too late: B holds it now.
    await expectRejects(() => store.claim('r1', 'C', 1000, { takeOverFrom: 'A' }), RunLocked, lockedBy('r1', 'B', 1010));
    await store.append('r1', [reply(1)], head({ turn: 1 }), { owner: 'B', seq: 1 });
    // Even once B is done and has released, A stays fenced out (no lease, and the log moved on).
    await store.release('r1', 'B');
    await expectRejects(() => store.append('r1', [reply(1)], head({ turn: 1 }), { owner: 'A', seq: 1 }), RunLocked, notLeased('r1', 'A'));
    expect(await store.load('r1')).toEqual({ entries: [input(), reply(1)], head: head({ turn: 1 }), schemaVersion: 6 });
  });

  it('an expired lease nobody took over still belongs to its owner: it appends and renews', async () => {
    const clock = manualClock(0);
    const store = await fresh(clock.now);
    await store.claim('r1', 'A', 10);
    clock.set(50);
    await store.append('r1', [input()], head(), { owner: 'A', seq: 0 });
    expect(await store.renew('r1', 'A', 100)).toEqual(lease('r1', 'A', 150));
    clock.set(149);
    await expectRejects(() => store.claim('r1', 'B', 100), RunLocked, lockedBy('r1', 'A', 150));
  });

  it('renews a held lease; renewing or fencing without any lease is RunLocked "not leased"', async () => {
    const clock = manualClock(0);
    const store = await fresh(clock.now);
    await expectRejects(() => store.renew('r1', 'A', 100), RunLocked, notLeased('r1', 'A'));
    await expectRejects(() => store.append('r1', [input()], head(), { owner: 'A', seq: 0 }), RunLocked, notLeased('r1', 'A'));
    expect(await store.load('r1')).toBeUndefined();
    await store.claim('r1', 'A', 100);
    clock.set(60);
    expect(await store.renew('r1', 'A', 100)).toEqual(lease('r1', 'A', 160));
    expect((await store.list()).length).toBe(0);
  });

  it('release drops only the holder’s lease', async () => {
    const clock = manualClock(0);
    const store = await fresh(clock.now);
    await store.append('r1', [input()], head());
    await store.claim('r1', 'A', 100);
    await store.release('r1', 'B');
    await store.release('never', 'A');
    expect((await store.load('r1'))?.lease).toEqual(lease('r1', 'A', 100));
    await store.release('r1', 'A');
    expect(await store.load('r1')).toEqual({ entries: [input()], head: head(), schemaVersion: 6 });
    expect(await store.claim('r1', 'B', 100)).toEqual(lease('r1', 'B', 100));
  });

  it('a fenced append with the wrong sequence is RunLocked "moved on" and writes nothing; the right one writes', async () => {
    const clock = manualClock(0);
    const store = await fresh(clock.now);
    await store.claim('r1', 'A', 1000);
    await store.append('r1', [input()], head(), { owner: 'A', seq: 0 });
    clock.set(5);
    await expectRejects(() => store.append('r1', [reply(1)], head({ turn: 1 }), { owner: 'A', seq: 0 }), RunLocked, movedOn('r1', 1, 0));
    await expectRejects(() => store.append('r1', [], head({ status: 'completed' }), { owner: 'A', seq: 2 }), RunLocked, movedOn('r1', 1, 2));
    expect((await store.list()).map((r) => [r.entries, r.updatedAt, r.head.status])).toEqual([[1, 0, 'running']]);
    await store.append('r1', [reply(1), turnEnd(1)], head({ turn: 1 }), { owner: 'A', seq: 1 });
    await store.append('r1', [], head({ turn: 1, status: 'completed' }), { owner: 'A', seq: 3 });
    expect(await store.load('r1')).toEqual({ entries: [input(), reply(1), turnEnd(1)], head: head({ turn: 1, status: 'completed' }), schemaVersion: 6, lease: lease('r1', 'A', 1000) });
  });

  it('same-key concurrent claims from five instances: exactly one wins, the others are told who', async () => {
    const backing = await harness.checkpoints();
    const clock = manualClock(0);
    const stores = [0, 1, 2, 3, 4].map(() => backing.open(clock.now));
    // async wrappers: a synchronous store's refusal becomes a rejection like an async one's.
    const settled = await Promise.allSettled(stores.map(async (store, i) => store.claim('r1', `owner-${i}`, 1000)));
    const won = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    expect(won.length).toBe(1);
    const winner = won[0]!.owner;
    const lost = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected').map((s) => s.reason as RunLocked);
    expect(lost.map((e) => [e instanceof RunLocked, e.owner, e.message])).toEqual(Array(4).fill([true, winner, lockedBy('r1', winner, 1000)]));
  });

  it('two concurrent fenced appends at the same sequence: exactly one lands', async () => {
    const backing = await harness.checkpoints();
    const clock = manualClock(0);
    const [one, two] = [backing.open(clock.now), backing.open(clock.now)];
    await one.claim('r1', 'A', 1000);
    const settled = await Promise.allSettled([
      (async () => one.append('r1', [input('one')], head(), { owner: 'A', seq: 0 }))(),
      (async () => two.append('r1', [input('two')], head(), { owner: 'A', seq: 0 }))(),
    ]);
    expect(settled.map((s) => s.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')!.reason as Error;
    expect([refused instanceof RunLocked, refused.message]).toEqual([true, movedOn('r1', 1, 0)]);
    const stored = (await one.load('r1'))!.entries;
    expect(stored.length).toBe(1);
    expect(stored).toEqual([input(settled[0]!.status === 'fulfilled' ? 'one' : 'two')]);
  });

  it('refuses a lease that cannot be one with a UserError', async () => {
    const store = await fresh();
    await expectRejects(() => store.claim('', 'A', 10), UserError, 'A run id must be a non-empty string, got "".');
    await expectRejects(() => store.claim('r1', '', 10), UserError, 'A lease owner must be a non-empty string, got "".');
    await expectRejects(() => store.claim('r1', 'A', 0), UserError, 'A lease TTL must be a positive number of milliseconds, got 0.');
    await expectRejects(() => store.renew('r1', 'A', Number.NaN), UserError, 'A lease TTL must be a positive number of milliseconds, got NaN.');
  });

  it.runIf(harness.batch)('appendBatch (group commit) refuses requests one by one and commits the rest', async () => {
    const clock = manualClock(0);
    const store = await fresh(clock.now);
    await store.claim('r2', 'B', 1000);
    const results = (await store.appendBatch!([
      { runId: 'r1', entries: [input('one')], head: head() },
      { runId: 'r2', entries: [input('two')], head: head(), fence: { owner: 'A', seq: 0 } },
      { runId: 'r3', entries: [turnEnd(-1)], head: head() },
      { runId: 'r4', entries: [input('four')], head: head() },
    ])) as (Error | undefined)[];
    expect(results.map((e) => e && [e.constructor.name, e.message])).toEqual([
      undefined,
      ['RunLocked', lockedBy('r2', 'B', 1000)],
      ['UserError', "Cannot append to run 'r3': entry 1 of this append is invalid: field 'turn' must be a non-negative integer, got -1."],
      undefined,
    ]);
    expect((await store.list()).map((r) => [r.runId, r.entries])).toEqual([
      ['r1', 1],
      ['r4', 1],
    ]);
  });
}
