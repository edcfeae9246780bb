import type { RunEvent } from '../types.js';

/**
 * Buffers run events for one consumer. Iteration never throws and ends after the terminal
 * event. The channel tells the run when the consumer has pulled *past* an event (so an
 * undecided approval can fall back to the handler) and when nobody is listening at all
 * (Runner.run, or a consumer that broke out of its loop), in which case nothing is buffered.
 */
export class EventChannel implements AsyncIterable<RunEvent> {
  private buffer: RunEvent[] = [];
  private head = 0;
  private waiting: ((result: IteratorResult<RunEvent>) => void) | undefined;
  private closed = false;
  private draining = false;
  private iterating = false;
  private lastDelivered: RunEvent | undefined;

  constructor(
    private readonly onPassed: (event: RunEvent) => void,
    /** Called once when nobody will read events any more. */
    private readonly onDrained: () => void = () => undefined,
  ) {}

  /** True while a consumer may still read events. */
  get listening(): boolean {
    return !this.draining;
  }

  get started(): boolean {
    return this.iterating;
  }

  push(event: RunEvent, terminal = false): void {
    if (this.closed) return;
    if (terminal) this.closed = true;
    if (this.draining) {
      this.onPassed(event);
      return;
    }
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      this.lastDelivered = event;
      resolve({ value: event, done: false });
      return;
    }
    this.buffer.push(event);
  }

  /** Stop buffering: every buffered and future event counts as passed. */
  drain(): void {
    if (this.draining) return;
    this.draining = true;
    this.passLast();
    const pending = this.buffer.slice(this.head);
    this.buffer = [];
    this.head = 0;
    for (const event of pending) this.onPassed(event);
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ value: undefined, done: true });
    }
    this.onDrained();
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    this.iterating = true;
    return {
      next: () => this.next(),
      return: async () => {
        this.drain();
        return { value: undefined, done: true };
      },
    };
  }

  private next(): Promise<IteratorResult<RunEvent>> {
    this.passLast();
    if (this.head < this.buffer.length) {
      const event = this.buffer[this.head++]!;
      // Release consumed events so long runs do not keep their whole history alive.
      if (this.head > 1024 && this.head * 2 > this.buffer.length) {
        this.buffer = this.buffer.slice(this.head);
        this.head = 0;
      }
      this.lastDelivered = event;
      return Promise.resolve({ value: event, done: false });
    }
    if (this.closed || this.draining) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  private passLast(): void {
    const last = this.lastDelivered;
    if (last) {
      this.lastDelivered = undefined;
      this.onPassed(last);
    }
  }
}
