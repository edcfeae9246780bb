import { afterEach, describe, expect, it } from 'vitest';
import type { WireRunEvent } from '../../src/inspect/wire.js';
import { RemoteStreams } from '../../src/server/remote-streams.js';
import { PostgresRunBus } from '../../src/store/postgres-bus.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { POSTGRES_URL, usePostgresSchema } from '../store/harnesses.js';
import { head, input, usage } from '../store/store-helpers.js';

/** A watcher that records what it gets and whether it ended. */
function recorder() {
  const events: Array<{ event: WireRunEvent; id: number }> = [];
  let ended = false;
  let wake: (() => void) | undefined;
  let arrived: (() => void) | undefined;
  return {
    events,
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
});
