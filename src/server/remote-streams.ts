import { EventsPruned } from '../errors.js';
import type { WireRunEvent } from '../inspect/wire.js';
import { isFinished } from '../run-status.js';
import type { CheckpointHead, RunStatus, StoredRun } from '../store/checkpoint-store.js';
import type { RunBus, StoredRunEvent } from '../store/run-bus.js';

/** What the streams read of the store, to end the stream of a run whose last events were never published. */
export interface StreamStore {
  runState(runId: string): Promise<RunStatus | undefined>;
  load(runId: string): Promise<StoredRun | undefined> | StoredRun | undefined;
}

/** Receives a remote run's stored events in order (`id` is the bus's event id), then its end. */
export interface RemoteWatcher {
  event(event: WireRunEvent, id: number): void;
  /** The run's events after the watcher's cursor were pruned (retention): tell the client so; `end` follows. */
  pruned(error: EventsPruned): void;
  end(): void;
}

interface Watch {
  cursor: number;
  readonly watcher: RemoteWatcher;
  /** Goes on through a park (`run_suspended`) to the root run's terminal event. */
  readonly throughParks: boolean;
}

/** Options of `RemoteStreams.watch`. */
export interface WatchOptions {
  /**
   * Do not end at the root run's `run_suspended`: the watcher stays until the run's terminal
   * event, so a run resumed by a worker after a decision goes on in the same stream (the UI
   * message stream, whose message must not end before the run does). Default false.
   */
  readonly throughParks?: boolean;
}

/** Events read per query while catching up. */
const PAGE = 500;

/** How often a watched run is read even without a notice (a lost notice costs at most this). */
const SAFETY_POLL_MS = 5_000;
/** Polls in a row a run must look over (finished head, no live lease, no last event) before its end is taken from the log. */
const POLLS_BEFORE_LOG_END = 2;

/**
 * The last event as the log tells it, for a run whose worker stored its finished head and died
 * before publishing its last events (no worker takes a finished run again). Marked `fromLog`.
 */
export function endFromLog(runId: string, head: CheckpointHead): WireRunEvent {
  const base = { runId, path: [head.agent], agent: head.agent, usage: head.usage, turns: head.turn, fromLog: true };
  if (head.status === 'completed') return { type: 'run_completed', ...base, output: head.output ?? '' } as unknown as WireRunEvent;
  const name = head.error?.name ?? (head.status === 'cancelled' ? 'RunCancelled' : 'TroupeError');
  const code = name === 'RunCancelled' ? 'RUN_CANCELLED' : undefined;
  return { type: 'run_failed', ...base, error: { name, ...(code ? { code } : {}), message: head.error?.message ?? `run ${head.status}` } } as unknown as WireRunEvent;
}

/**
 * The root run's last event: a stream of it ends there. `run_suspended` ends it only when
 * nothing follows yet (`latest`): a run resumed later has more events after it, and a replay
 * goes on through them (a live watcher ends at the park and reattaches for the rest).
 */
export function endsStream(event: WireRunEvent, runId: string, latest: boolean): boolean {
  if (event.runId !== runId) return false;
  return event.type === 'run_completed' || event.type === 'run_failed' || (event.type === 'run_suspended' && latest);
}

/**
 * The events of runs that workers run, for this server node's SSE clients: each watcher gets
 * the stored events after its cursor (so a reconnecting client with `Last-Event-ID` misses
 * nothing), then new ones as the bus announces them, until the run's last event. Reads of one
 * run are serialised, and every watcher of it shares them.
 */
export class RemoteStreams {
  private readonly watches = new Map<string, Set<Watch>>();
  private readonly reading = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  /** Who wants to hear of new events of a run (awaited decisions), by run id. */
  private readonly noticeHandlers = new Map<string, Set<() => void>>();
  private unlisten: (() => Promise<void>) | undefined;
  private poll: NodeJS.Timeout | undefined;
  /** Runs seen over (see POLLS_BEFORE_LOG_END), by the polls in a row that saw them so. */
  private readonly overSeen = new Map<string, number>();
  private readonly pollMs: number;

  constructor(
    private readonly bus: RunBus,
    private readonly store?: StreamStore,
    options: { readonly pollMs?: number; readonly log?: (line: string) => void } = {},
  ) {
    this.pollMs = options.pollMs ?? SAFETY_POLL_MS;
    this.log = options.log ?? (() => {});
  }

  private readonly log: (line: string) => void;

  /** Listens for event notices. @throws StoreUnavailable when the database cannot be reached. */
  async start(): Promise<void> {
    this.unlisten = await this.bus.listen({
      events: (runId) => {
        this.read(runId);
        for (const handler of [...(this.noticeHandlers.get(runId) ?? [])]) handler();
      },
      reconnected: () => {
        for (const runId of this.watches.keys()) this.read(runId);
        for (const handlers of this.noticeHandlers.values()) for (const handler of [...handlers]) handler();
      },
    });
    this.poll = setInterval(() => {
      for (const runId of this.watches.keys()) {
        this.read(runId);
        void this.endIfOver(runId);
      }
    }, this.pollMs);
    this.poll.unref();
  }

  get watcherCount(): number {
    let n = 0;
    for (const set of this.watches.values()) n += set.size;
    return n;
  }

  /**
   * Calls `handler` whenever the bus announces new events of `runId` (and after a reconnect,
   * when announcements may have been missed); returns the unsubscribe. A hint to look again,
   * not a delivery: the store says what happened.
   */
  onEvents(runId: string, handler: () => void): () => void {
    let handlers = this.noticeHandlers.get(runId);
    if (!handlers) this.noticeHandlers.set(runId, (handlers = new Set()));
    handlers.add(handler);
    return () => {
      handlers.delete(handler);
      if (handlers.size === 0 && this.noticeHandlers.get(runId) === handlers) this.noticeHandlers.delete(runId);
    };
  }

  /** Streams `runId`'s events after `afterId` to `watcher`; returns the unsubscribe. */
  watch(runId: string, afterId: number, watcher: RemoteWatcher, options: WatchOptions = {}): () => void {
    const watch: Watch = { cursor: afterId, watcher, throughParks: options.throughParks ?? false };
    let set = this.watches.get(runId);
    if (!set) this.watches.set(runId, (set = new Set()));
    set.add(watch);
    this.read(runId);
    return () => this.drop(runId, watch);
  }

  async close(): Promise<void> {
    if (this.poll) clearInterval(this.poll);
    for (const [runId, set] of [...this.watches]) for (const watch of [...set]) this.drop(runId, watch, true);
    await this.unlisten?.();
  }

  private drop(runId: string, watch: Watch, end = false): void {
    const set = this.watches.get(runId);
    if (!set?.delete(watch)) return;
    if (set.size === 0) {
      this.watches.delete(runId);
      this.overSeen.delete(runId);
    }
    if (end) watch.watcher.end();
  }

  /**
   * Ends the streams of a run that is over but whose last event never came (its worker died
   * between storing the finished head and publishing it): after POLLS_BEFORE_LOG_END polls in a
   * row that find the head finished, no live lease and the streams still open, the watchers get
   * the end the log holds (`endFromLog`).
   */
  private async endIfOver(runId: string): Promise<void> {
    if (!this.store) return;
    try {
      await this.reading.get(runId);
      const over = await this.store.runState(runId);
      const saved = isFinished(over) ? await this.store.load(runId) : undefined;
      const idle = saved !== undefined && isFinished(saved.head.status) && !(saved.lease && saved.lease.expiresAt > Date.now());
      if (!idle || !this.watches.has(runId)) return void this.overSeen.delete(runId);
      const seen = (this.overSeen.get(runId) ?? 0) + 1;
      if (seen < POLLS_BEFORE_LOG_END) return void this.overSeen.set(runId, seen);
      const event = endFromLog(runId, saved.head);
      for (const watch of [...(this.watches.get(runId) ?? [])]) {
        watch.watcher.event(event, watch.cursor);
        this.drop(runId, watch, true);
      }
    } catch (error) {
      this.log(`checking whether run ${runId} is over failed (${(error as Error).message})`);
    }
  }

  /** Reads `runId`'s new events once the current read is done (coalescing notices that arrive meanwhile). */
  private read(runId: string): void {
    if (!this.watches.has(runId)) return;
    if (this.reading.has(runId)) {
      this.again.add(runId);
      return;
    }
    const task = this.catchUp(runId).finally(() => {
      this.reading.delete(runId);
      if (this.again.delete(runId)) this.read(runId);
    });
    this.reading.set(runId, task);
  }

  private async catchUp(runId: string): Promise<void> {
    for (;;) {
      const set = this.watches.get(runId);
      if (!set || set.size === 0) return;
      const from = Math.min(...[...set].map((watch) => watch.cursor));
      let page: StoredRunEvent[];
      try {
        page = await this.bus.events(runId, from, PAGE);
      } catch (error) {
        if (error instanceof EventsPruned) {
          // Never an empty stream: every watcher whose next events are gone is told, and ends.
          for (const watch of [...set]) {
            if (watch.cursor >= error.through) continue;
            watch.watcher.pruned(error);
            this.drop(runId, watch, true);
          }
          continue;
        }
        this.log(`reading events of run ${runId} failed (${(error as Error).message}); retried at the next notice`);
        return;
      }
      page.forEach((stored, index) => {
        const latest = index === page.length - 1 && page.length < PAGE;
        for (const watch of [...set]) {
          if (stored.id <= watch.cursor) continue;
          watch.cursor = stored.id;
          watch.watcher.event(stored.event, stored.id);
          if (endsStream(stored.event, runId, latest && !watch.throughParks)) this.drop(runId, watch, true);
        }
      });
      if (page.length < PAGE) return;
    }
  }
}
