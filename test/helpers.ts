import type { RunEvent, RunHandle } from '../src/index.js';

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = unknown>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets pending promise callbacks and actor mailboxes run. */
export async function flush(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setTimeout(r, 0));
}

/** Reads the whole stream; `onEvent` may act on events (approve, cancel) as they arrive. */
export async function collect(handle: RunHandle, onEvent?: (event: RunEvent) => void | Promise<void>): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of handle) {
    events.push(event);
    await onEvent?.(event);
  }
  return events;
}

/** Compact, readable trace: "type" or "type:callId" for tool events. */
export function trace(events: readonly RunEvent[], skip: readonly RunEvent['type'][] = ['text_delta']): string[] {
  return events
    .filter((e) => !skip.includes(e.type))
    .map((e) => ('call' in e ? `${e.type}:${e.call.id}` : e.type));
}

export function completed(events: readonly RunEvent[]) {
  return events.filter((e): e is Extract<RunEvent, { type: 'tool_call_completed' }> => e.type === 'tool_call_completed');
}
