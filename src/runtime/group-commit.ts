import type { AppendFence, CheckpointEntry, CheckpointHead, CheckpointStore } from '../store/checkpoint-store.js';

/** What GroupCommit needs of a run's log (RunLog). */
export interface CommitSource {
  takeRequest(): { runId: string; entries: CheckpointEntry[]; head: CheckpointHead; fence: AppendFence | undefined } | undefined;
  written(count: number, head: CheckpointHead, error: unknown): void;
  track(write: Promise<void>): void;
}

const queues = new WeakMap<CheckpointStore, CommitSource[]>();

/**
 * Schedules `source`'s buffered entries to be written at the end of the current step. All
 * runs that write to one store in the same step are flushed together: through the store's
 * `appendBatch` when it has one (one transaction, one sync to disk: group commit), else one
 * `append` per run. The order of a run's own appends is kept: a run has at most one request
 * in flight and buffers the rest.
 */
export function commitLater(store: CheckpointStore, source: CommitSource): void {
  let queue = queues.get(store);
  if (queue) {
    queue.push(source);
    return;
  }
  queue = [source];
  queues.set(store, queue);
  queueMicrotask(() => {
    queues.delete(store);
    flush(store, queue!);
  });
}

function flush(store: CheckpointStore, sources: readonly CommitSource[]): void {
  const requests: Array<{ source: CommitSource; request: NonNullable<ReturnType<CommitSource['takeRequest']>> }> = [];
  for (const source of sources) {
    const request = source.takeRequest();
    if (request) requests.push({ source, request });
  }
  if (requests.length === 0) return;
  if (store.appendBatch && requests.length > 1) return flushBatch(store, requests);
  for (const { source, request } of requests) {
    let result: void | Promise<void>;
    try {
      result = store.append(request.runId, request.entries, request.head, request.fence);
    } catch (error) {
      source.written(request.entries.length, request.head, error);
      continue;
    }
    if (result instanceof Promise) {
      source.track(result.then(
        () => source.written(request.entries.length, request.head, undefined),
        (error: unknown) => source.written(request.entries.length, request.head, error ?? new Error('checkpoint append failed')),
      ));
    } else {
      source.written(request.entries.length, request.head, undefined);
    }
  }
}

function flushBatch(store: CheckpointStore, requests: ReadonlyArray<{ source: CommitSource; request: NonNullable<ReturnType<CommitSource['takeRequest']>> }>): void {
  const answer = (errors: readonly (Error | undefined)[] | undefined, failure: unknown): void => {
    requests.forEach(({ source, request }, i) => source.written(request.entries.length, request.head, failure ?? errors?.[i]));
  };
  let result: ReturnType<NonNullable<CheckpointStore['appendBatch']>>;
  try {
    result = store.appendBatch!(requests.map(({ request }) => request));
  } catch (error) {
    return answer(undefined, error);
  }
  if (!(result instanceof Promise)) return answer(result, undefined);
  const done = result.then(
    (errors) => answer(errors, undefined),
    (error: unknown) => answer(undefined, error ?? new Error('checkpoint append failed')),
  );
  for (const { source } of requests) source.track(done);
}
