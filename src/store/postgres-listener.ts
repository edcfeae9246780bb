/**
 * LISTEN on a dedicated PostgreSQL connection (a pooled one would be handed to other work and
 * lose its subscriptions). A dropped connection is re-opened with a growing pause and the
 * channels listened to again; since notifications sent meanwhile are gone, `reconnected` tells
 * the owner to poll what it watches.
 */
import { createHash } from 'node:crypto';
import type * as Pg from 'pg';
import type { BusListeners } from './run-bus.js';
import { poolConfig } from './postgres.js';
import { pg } from './postgres-driver.js';
import type { PostgresConnection } from './postgres-options.js';

export type ChannelKind = 'work' | 'message' | 'events';
const LETTER: Record<ChannelKind, string> = { work: 'w', message: 'm', events: 'e' };

/** The NOTIFY channel of `kind` for one schema (schemas of one database never hear each other). */
export function channelFor(schema: string, kind: ChannelKind): string {
  const name = `troupe_${LETTER[kind]}_${schema}`;
  // Channel names are identifiers: at most 63 bytes.
  return name.length <= 63 ? name : `troupe_${LETTER[kind]}_${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`;
}

const MAX_PAUSE_MS = 5_000;

/** Starts listening; resolves once the first LISTEN succeeded. @throws StoreUnavailable-like driver errors from the first connect (the caller maps them). */
export async function listenFor(connection: PostgresConnection, schema: string, listeners: BusListeners): Promise<() => Promise<void>> {
  // Only the channels someone listens to: a worker does not hear every run's events.
  const wanted = (['work', 'message', 'events'] as const).filter((kind) => listeners[kind] !== undefined);
  const channels = new Map<string, ChannelKind>(wanted.map((kind) => [channelFor(schema, kind), kind]));
  let client: Pg.Client | undefined;
  let stopped = false;
  let pause = 100;
  let timer: NodeJS.Timeout | undefined;

  const dispatch = (note: Pg.Notification): void => {
    const kind = channels.get(note.channel);
    const runId = note.payload ?? '';
    try {
      if (kind === 'work') listeners.work?.(runId);
      else if (kind === 'message') listeners.message?.(runId);
      else if (kind === 'events') listeners.events?.(runId);
    } catch {
      // A listener that throws must not end the connection's dispatch.
    }
  };

  async function open(): Promise<void> {
    const next = new pg.Client({ ...poolConfig(connection), application_name: 'troupe listener' });
    // Until it listens, a failure is this attempt's (its caller retries), not a drop.
    const early = (): void => {};
    next.on('error', early);
    try {
      await next.connect();
      for (const channel of channels.keys()) await next.query(`LISTEN "${channel}"`);
    } catch (error) {
      await next.end().catch(() => {});
      throw error;
    }
    next.off('error', early);
    next.on('notification', dispatch);
    next.on('error', () => drop(next));
    next.on('end', () => drop(next));
    client = next;
  }

  function drop(failed: Pg.Client): void {
    if (client !== failed) return;
    client = undefined;
    failed.removeAllListeners('notification');
    void failed.end().catch(() => {});
    if (!stopped && timer === undefined) schedule();
  }

  function schedule(): void {
    timer = setTimeout(() => {
      timer = undefined;
      if (stopped) return;
      open().then(
        () => {
          pause = 100;
          if (stopped) void client?.end().catch(() => {});
          else listeners.reconnected?.();
        },
        () => {
          pause = Math.min(MAX_PAUSE_MS, pause * 2);
          schedule();
        },
      );
    }, pause);
    // A process waiting only for the database to come back may still exit.
    timer.unref();
  }

  await open();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    const last = client;
    client = undefined;
    await last?.end().catch(() => {});
  };
}
