import { UserError } from '../errors.js';
import type { RunEvent, RunEventType, SubscriberFailedEvent } from '../types.js';

/** Handles one kind of event (sync or async; what it returns is not used, except a rejection). */
export type RunEventHandler<E extends RunEvent = RunEvent> = (event: E) => void | Promise<void>;

/**
 * Run-level event subscribers (lovia's hooks as subscribers): a handler per event type, and
 * `'*'` for every event, e.g. `{ tool_call_completed: (e) => …, '*': (e) => … }`.
 */
export type RunSubscriber = { readonly [K in RunEventType]?: RunEventHandler<Extract<RunEvent, { readonly type: K }>> } & { readonly '*'?: RunEventHandler };

interface Entry {
  readonly key: RunEventType | '*';
  readonly handler: RunEventHandler;
}

/**
 * The subscribers of one run tree, in registration order: `RunOptions.on` (in array order, then
 * each object's key order), then `handle.on` calls as they were made. Every event of the tree
 * goes to each handler registered under its type or '*', in that order, before it enters the
 * stream. A handler that throws (or whose promise rejects) is skipped: the failure becomes a
 * `subscriber_failed` event and the run goes on unchanged; the next handlers are still called.
 */
export class RunSubscribers {
  private entries: Entry[] = [];

  /** @throws UserError when `given` is not subscriber objects of functions. */
  constructor(given: RunSubscriber | readonly RunSubscriber[] | undefined) {
    for (const subscriber of given === undefined ? [] : Array.isArray(given) ? given : [given]) {
      if (typeof subscriber !== 'object' || subscriber === null) throw new UserError(`on must be an object of event handlers ({ tool_call_completed: fn, '*': fn }) or an array of them, got ${subscriber === null ? 'null' : typeof subscriber}.`);
      for (const [key, handler] of Object.entries(subscriber as Record<string, unknown>)) this.add(key, handler);
    }
  }

  get size(): number {
    return this.entries.length;
  }

  /**
   * Adds a handler after the others; returns a function that removes it.
   * @throws UserError when `handler` is not a function or `key` is empty.
   */
  add(key: string, handler: unknown): () => void {
    if (typeof key !== 'string' || key === '') throw new UserError(`An event subscriber needs an event type or '*', got ${JSON.stringify(key)}.`);
    if (typeof handler !== 'function') throw new UserError(`The subscriber for '${key}' must be a function, got ${handler === null ? 'null' : typeof handler}.`);
    const entry: Entry = { key: key as RunEventType | '*', handler: handler as RunEventHandler };
    this.entries = [...this.entries, entry];
    return () => {
      this.entries = this.entries.filter((e) => e !== entry);
    };
  }

  /**
   * Calls the handlers of `event`; returns the failures of sync handlers, as events, in order.
   * An async handler's rejection goes to `late` when it comes. A handler of a
   * `subscriber_failed` event that fails is not reported again (that could loop).
   */
  dispatch(event: RunEvent, late: (failure: SubscriberFailedEvent) => void): SubscriberFailedEvent[] {
    let failures: SubscriberFailedEvent[] | undefined;
    // A handler added or removed during dispatch counts from the next event.
    for (const { key, handler } of this.entries) {
      if (key !== '*' && key !== event.type) continue;
      const report = (error: unknown): SubscriberFailedEvent | undefined => (event.type === 'subscriber_failed' ? undefined : failed(event, key, error));
      try {
        const returned = handler(event) as unknown;
        if (isThenable(returned)) {
          returned.then(undefined, (error: unknown) => {
            const failure = report(error);
            if (failure) late(failure);
          });
        }
      } catch (error) {
        const failure = report(error);
        if (failure) (failures ??= []).push(failure);
      }
    }
    return failures ?? [];
  }
}

function failed(event: RunEvent, key: RunEventType | '*', error: unknown): SubscriberFailedEvent {
  return { type: 'subscriber_failed', runId: event.runId, path: event.path, agent: event.agent, eventType: event.type, subscribedTo: key, error: error instanceof Error ? error : new Error(String(error)) };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
