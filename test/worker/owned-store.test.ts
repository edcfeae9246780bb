import { describe, expect, it } from 'vitest';
import { RunLocked } from '../../src/errors.js';
import { MemoryCheckpointStore } from '../../src/store/checkpoint-store.js';
import { ownedStore } from '../../src/worker/owned-store.js';
import { expectRejects, lease, manualClock } from '../store/harnesses.js';
import { head, input, reply, turnEnd } from '../store/store-helpers.js';

describe('ownedStore: the store view a worker hands to a run', () => {
  it('fences every append with the entry count it knows, as the worker, so a worker that lost its lease writes nothing', async () => {
    const clock = manualClock(0);
    const store = new MemoryCheckpointStore({ now: clock.now });
    store.append('r1', [input()], head());
    store.claim('r1', 'worker-1', 100);
    const view = ownedStore(store, 'worker-1');
    expect((await view.load('r1'))?.entries).toEqual([input()]);
    await view.append('r1', [reply(1)], head({ turn: 1 }));
    await view.append('r1', [turnEnd(1)], head({ turn: 1 }));
    // Someone appended behind the worker's back: the next write is refused.
    store.append('r1', [input('sneaky')], head({ turn: 1 }));
    await expectRejects(() => view.append('r1', [reply(2)], head({ turn: 2 })), RunLocked, "Run 'r1' moved on: 4 entries are stored but its writer expected 3; nothing was written.");
    clock.set(100);
    store.claim('r1', 'worker-2', 100);
    await expectRejects(
      () => view.append('r1', [], head({ turn: 1, status: 'cancelled' }), { owner: 'runtime-owner', seq: 4 }),
      RunLocked,
      `Run 'r1' is locked by 'worker-2' until ${new Date(200).toISOString()}; nothing was written. Wait for the lease to expire or stop the other process.`,
    );
    expect(store.load('r1')?.entries).toEqual([input(), reply(1), turnEnd(1), input('sneaky')]);
    expect(store.load('r1')?.head.status).toBe('running');
  });

  it('claims, renews and releases as the worker whatever owner the run names', async () => {
    const clock = manualClock(0);
    const store = new MemoryCheckpointStore({ now: clock.now });
    store.claim('r1', 'worker-1', 100);
    const view = ownedStore(store, 'worker-1');
    expect(await view.claim('r1', 'runtime-owner', 50)).toEqual(lease('r1', 'worker-1', 50));
    expect(await view.renew('r1', 'runtime-owner', 70)).toEqual(lease('r1', 'worker-1', 70));
    await view.release('r1', 'runtime-owner');
    expect(store.claim('r1', 'other', 10)).toEqual(lease('r1', 'other', 10));
  });
});
