import type { WireRunEvent } from '../inspect/wire.js';

/** Never dropped: how a run ended and what it asked a human. */
const PINNED = new Set(['run_completed', 'run_failed', 'approval_required']);
/** Dropped first: one event per streamed token. */
const DROPPABLE = new Set(['text_delta', 'reasoning_delta']);

interface Entry {
  readonly seq: number;
  readonly event: WireRunEvent;
  readonly bytes: number;
  readonly droppable: boolean;
  readonly pinned: boolean;
  dropped: boolean;
}

/** What an `EventLog` has let go of (`GET /api/runs/:id` → `droppedEvents`, `droppedEventBytes`). */
export interface DroppedEvents {
  readonly count: number;
  /** UTF-8 bytes of the dropped events' JSON. */
  readonly bytes: number;
}

/**
 * The events a server run keeps for `GET /api/runs/:id` and late subscribers, bounded by
 * count and by bytes (the UTF-8 length of each event's JSON). Past either bound it drops
 * the oldest text/reasoning delta first, then the oldest other event; terminal events
 * (`run_completed`, `run_failed`) and `approval_required` are never dropped, so only they
 * can hold the log past its bounds. An event bigger than `maxBytes` on its own is not kept
 * at all (it would evict everything and still not fit). Every drop is counted in `dropped`.
 *
 * Dropping is amortised O(1): entries are marked, two cursors walk forward to the oldest
 * droppable and the oldest unpinned entry, and the array is compacted when half is marked.
 */
export class EventLog {
  private entries: Entry[] = [];
  private liveCount = 0;
  private liveBytes = 0;
  private droppedCount = 0;
  private droppedBytes = 0;
  /** No live droppable entry sits before this index. */
  private deltaCursor = 0;
  /** No live unpinned entry sits before this index. */
  private anyCursor = 0;

  /** Both bounds are positive integers (createServer checks them). */
  constructor(
    private readonly maxEvents: number,
    private readonly maxBytes: number,
  ) {}

  /** Events kept, oldest first. */
  get events(): WireRunEvent[] {
    return this.live().map((entry) => entry.event);
  }

  /** Kept events with their sequence number in the run (gaps are dropped events). */
  entriesWithSeq(): Array<{ readonly seq: number; readonly event: WireRunEvent }> {
    return this.live().map(({ seq, event }) => ({ seq, event }));
  }

  /** UTF-8 bytes of the kept events' JSON. */
  get bytes(): number {
    return this.liveBytes;
  }

  get size(): number {
    return this.liveCount;
  }

  get dropped(): DroppedEvents {
    return { count: this.droppedCount, bytes: this.droppedBytes };
  }

  /** Keeps `event` (number `seq` in the run), dropping older ones as the bounds require. */
  add(seq: number, event: WireRunEvent): void {
    const bytes = Buffer.byteLength(JSON.stringify(event));
    const pinned = PINNED.has(event.type);
    if (!pinned && bytes > this.maxBytes) {
      this.droppedCount++;
      this.droppedBytes += bytes;
      return;
    }
    this.entries.push({ seq, event, bytes, droppable: DROPPABLE.has(event.type), pinned, dropped: false });
    this.liveCount++;
    this.liveBytes += bytes;
    while (this.liveCount > this.maxEvents || this.liveBytes > this.maxBytes) {
      const victim = this.oldest((entry) => entry.droppable, 'deltaCursor') ?? this.oldest((entry) => !entry.pinned, 'anyCursor');
      if (!victim) break; // only pinned events are left
      victim.dropped = true;
      this.liveCount--;
      this.liveBytes -= victim.bytes;
      this.droppedCount++;
      this.droppedBytes += victim.bytes;
    }
    if (this.entries.length > 64 && this.liveCount * 2 < this.entries.length) this.compact();
  }

  private oldest(test: (entry: Entry) => boolean, cursor: 'deltaCursor' | 'anyCursor'): Entry | undefined {
    while (this[cursor] < this.entries.length) {
      const entry = this.entries[this[cursor]]!;
      if (!entry.dropped && test(entry)) return entry;
      this[cursor]++;
    }
    return undefined;
  }

  private live(): Entry[] {
    return this.entries.filter((entry) => !entry.dropped);
  }

  private compact(): void {
    this.entries = this.live();
    this.deltaCursor = 0;
    this.anyCursor = 0;
  }
}
