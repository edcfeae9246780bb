import type { RunEvent } from '../types.js';

interface Reader {
  /** Index of the next event this reader gets. */
  next: number;
  waiting: ((result: IteratorResult<RunEvent>) => void) | undefined;
  /** The event this reader was handed last; it counts as passed when the reader asks for the next one. */
  last: RunEvent | undefined;
  done: boolean;
}

/**
 * The event stream of one run tree. Every iterator gets every event from the first one
 * (events are kept for replay while the handle lives), so two loops over one handle never
 * steal events from or hang each other. Iteration never throws and ends after the terminal
 * event. The channel tells the run when a consumer has pulled *past* an event (an undecided
 * approval then falls to the handler) and when nobody will read any more.
 */
export class EventChannel implements AsyncIterable<RunEvent> {
  private readonly events: RunEvent[] = [];
  /** Created with the first iterator (Runner.run never has one). */
  private readers: Set<Reader> | undefined;
  private closed = false;
  /** Nobody reads: events are not kept, each counts as passed at once (Runner.run). */
  private draining = false;
  private everIterated = false;

  constructor(
    private readonly onPassed: (event: RunEvent) => void,
    /** Called once when nobody will read events any more. */
    private readonly onDrained: () => void = () => undefined,
  ) {}

  /** Whether an iterator was ever started. */
  get started(): boolean {
    return this.everIterated;
  }

  push(event: RunEvent, terminal = false): void {
    if (this.closed) return;
    if (terminal) this.closed = true;
    if (this.draining) {
      this.onPassed(event);
      return;
    }
    this.events.push(event);
    if (!this.readers) return;
    for (const reader of this.readers) if (reader.waiting) this.deliver(reader);
    if (terminal) for (const reader of this.readers) if (reader.waiting) this.end(reader);
  }

  /** Nobody will read: every kept and future event counts as passed, and nothing more is kept. */
  drain(): void {
    if (this.draining) return;
    this.draining = true;
    for (const event of this.events) this.onPassed(event);
    this.events.length = 0;
    if (this.readers) for (const reader of [...this.readers]) this.end(reader);
    this.onDrained();
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    this.everIterated = true;
    const reader: Reader = { next: 0, waiting: undefined, last: undefined, done: false };
    if (this.draining) reader.done = true;
    else (this.readers ??= new Set()).add(reader);
    return {
      next: () => this.read(reader),
      return: async () => {
        this.leave(reader);
        return { value: undefined, done: true };
      },
    };
  }

  private read(reader: Reader): Promise<IteratorResult<RunEvent>> {
    this.passLast(reader);
    if (reader.done) return Promise.resolve({ value: undefined, done: true });
    if (reader.next < this.events.length) {
      const event = this.events[reader.next++]!;
      reader.last = event;
      return Promise.resolve({ value: event, done: false });
    }
    if (this.closed) {
      this.end(reader);
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => (reader.waiting = resolve));
  }

  private deliver(reader: Reader): void {
    const resolve = reader.waiting!;
    reader.waiting = undefined;
    const event = this.events[reader.next++]!;
    reader.last = event;
    resolve({ value: event, done: false });
  }

  private end(reader: Reader): void {
    reader.done = true;
    this.readers?.delete(reader);
    const resolve = reader.waiting;
    reader.waiting = undefined;
    resolve?.({ value: undefined, done: true });
  }

  /** A reader broke out of its loop; when it was the last one before the end, nobody is listening any more. */
  private leave(reader: Reader): void {
    if (reader.done) return;
    this.passLast(reader);
    this.end(reader);
    if (!this.readers?.size && !this.closed) this.drain();
  }

  private passLast(reader: Reader): void {
    const last = reader.last;
    if (last) {
      reader.last = undefined;
      this.onPassed(last);
    }
  }
}
