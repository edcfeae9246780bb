import type { WireRunEvent } from '../inspect/wire.js';
import type { RunBus } from '../store/run-bus.js';

/** Events kept for publishing while the database does not take them; past this the oldest are dropped. */
const MAX_BUFFERED = 10_000;
const RETRY_MS = [100, 250, 500, 1000, 2000];

/**
 * Streams one run's events to the bus in order, one `publish` per batch of whatever arrived
 * while the previous batch was being written (so a busy run costs one transaction per batch,
 * not per event). A failed publish is retried with a growing pause; `flush` gives up after the
 * last pause. The run's log, not this stream, is what a run continues from: a lost event is
 * a gap in what watchers see, never in the run.
 */
export class EventPublisher {
  private buffer: WireRunEvent[] = [];
  private writing: Promise<void> | undefined;
  private dropped = 0;

  constructor(
    private readonly bus: RunBus,
    private readonly runId: string,
    private readonly log: (line: string) => void,
  ) {}

  push(event: WireRunEvent): void {
    this.buffer.push(event);
    if (this.buffer.length > MAX_BUFFERED) {
      this.buffer.shift();
      this.dropped++;
    }
    this.writing ??= this.drain();
  }

  /** Resolves once every event pushed so far is stored (or given up on). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    // A microtask first, so events emitted in the same tick share one batch.
    await Promise.resolve();
    while (this.buffer.length > 0) {
      const batch = this.buffer;
      this.buffer = [];
      await this.write(batch);
    }
    if (this.dropped > 0) {
      this.log(`run ${this.runId}: ${this.dropped} events were not published (the database did not take them)`);
      this.dropped = 0;
    }
    this.writing = undefined;
  }

  private async write(batch: WireRunEvent[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.bus.publish(this.runId, batch);
        return;
      } catch (error) {
        if (attempt >= RETRY_MS.length) {
          this.dropped += batch.length;
          this.log(`run ${this.runId}: publishing events failed (${(error as Error).message})`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS[attempt]));
      }
    }
  }
}
