import { afterEach, describe, expect, it } from 'vitest';
import type { EventsPruned } from '../../src/errors.js';
import type { WireRunEvent } from '../../src/inspect/wire.js';
import { RemoteStreams } from '../../src/server/remote-streams.js';
import { PostgresRunBus } from '../../src/store/postgres-bus.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { POSTGRES_URL, usePostgresSchema } from '../store/harnesses.js';
import { head, input, usage } from '../store/store-helpers.js';

/** A watcher that records what it gets and whether it ended. */
function recorder() {
  const events: Array<{ event: WireRunEvent; id: number }> = [];
  const pruned: EventsPruned[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  let arrived: (() => void) | undefined;
  return {
    events,
    pruned,
    /** Resolves once at least `count` events arrived. */
    received: (count: number) => new Promise<void>((resolve) => (events.length >= count ? resolve() : (arrived = () => events.length >= count && resolve()))),
    get ended() {
      return ended;
    },
    watcher: {
      event: (event: WireRunEvent, id: number) => {
        events.push({ event, id });
        arrived?.();
      },
      pruned: (error: EventsPruned) => void pruned.push(error),
      end: () => {
        ended = true;
        wake?.();
      },
    },
    done: () => new Promise<void>((resolve) => (ended ? resolve() : (wake = resolve))),
  };
}

describe(`remote run streams`, () => {
  const freshSchema = usePostgresSchema();
  const opened: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const item of opened.splice(0).reverse()) await item.close();
  });

  it('a run whose head is finished but whose last event was never published ends its streams with the end its log holds; one still leased does not', async () => {
    const schema = await freshSchema();
    const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema });
    const bus = new PostgresRunBus(POSTGRES_URL!, { schema });
    opened.push(store, bus);
    // What a worker killed right after storing the final heads leaves: events without the end.
    await store.append('gone', [input()], head({ agent: 'fiver', status: 'completed', output: 'done', turn: 2, usage: usage(3) }));
    await store.append('held', [input()], head({ agent: 'fiver', status: 'completed', output: 'done', turn: 2 }));
    await store.claim('held', 'a-live-worker', 600_000);
    for (const runId of ['gone', 'held']) await bus.publish(runId, [{ type: 'run_started', runId, path: ['fiver'], agent: 'fiver' }] as unknown as WireRunEvent[]);
    const streams = new RemoteStreams(bus, store, { pollMs: 30 });
    opened.push(streams);
    await streams.start();
    const [gone, held] = [recorder(), recorder()];
    streams.watch('gone', 0, gone.watcher);
    streams.watch('held', 0, held.watcher);
    await gone.done();
    const started = gone.events[0]!;
    expect(gone.events).toEqual([
      started,
      { event: { type: 'run_completed', runId: 'gone', path: ['fiver'], agent: 'fiver', usage: usage(3), turns: 2, fromLog: true, output: 'done' }, id: started.id },
    ]);
    expect(started.event.type).toBe('run_started');
    // Checked by the same polls: its lease says a worker may still publish, so it stays open.
    // (Its own published event may arrive after the other run ended: each watch reads the bus on its own.)
    expect(held.ended).toBe(false);
    await held.received(1);
    expect([held.ended, held.events.map((e) => e.event.type)]).toEqual([false, ['run_started']]);
    await store.release('held', 'a-live-worker');
    await held.done();
    expect(held.events.map((e) => e.event.type)).toEqual(['run_started', 'run_completed']);
  });

  it('a watch from a cursor whose events were pruned gets events_pruned and ends, never an empty stream; a watcher already past them goes on', async () => {
    const schema = await freshSchema();
    const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema });
    const bus = new PostgresRunBus(POSTGRES_URL!, { schema });
    opened.push(store, bus);
    // A finished run whose end was never published: its streams stay open (the log-end poll is out of reach here).
    await store.append('quiet', [input()], head({ agent: 'fiver', status: 'completed', output: 'done' }));
    await bus.publish('quiet', [{ type: 'run_started', runId: 'quiet', path: ['fiver'], agent: 'fiver' }, { type: 'turn_started', runId: 'quiet', path: ['fiver'], agent: 'fiver', turn: 1 }] as unknown as WireRunEvent[]);
    const streams = new RemoteStreams(bus, store, { pollMs: 600_000 });
    opened.push(streams);
    await streams.start();
    const attached = recorder();
    streams.watch('quiet', 0, attached.watcher);
    await attached.received(2);
    const last = attached.events[1]!.id;
    expect((await bus.pruneEvents({ keepLast: 0 })).runs.map((run) => [run.runId, run.events])).toEqual([['quiet', 2]]);
    // Reattaching from the start, or from the first event: the events are gone, and the watcher is told.
    const fromStart = recorder();
    streams.watch('quiet', 0, fromStart.watcher);
    await fromStart.done();
    const fromFirst = recorder();
    streams.watch('quiet', attached.events[0]!.id, fromFirst.watcher);
    await fromFirst.done();
    for (const late of [fromStart, fromFirst]) {
      expect(late.events).toEqual([]);
      expect(late.pruned.map((error) => [error.code, error.runId, error.through])).toEqual([['EVENTS_PRUNED', 'quiet', last]]);
    }
    // The watcher that had read everything before the prune gets what comes after it.
    await bus.publish('quiet', [{ type: 'run_completed', runId: 'quiet', path: ['fiver'], agent: 'fiver', output: 'done' }] as unknown as WireRunEvent[]);
    await attached.done();
    expect(attached.events.map((e) => e.event.type)).toEqual(['run_started', 'turn_started', 'run_completed']);
    expect(attached.pruned).toEqual([]);
  });
});
