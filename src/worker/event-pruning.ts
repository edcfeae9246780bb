/**
 * A worker's scheduled retention of stored run events (`pruneEvents` worker option): the same
 * prune as `troupe db prune`, at start and then every `every`. Several workers may do it at
 * once: each step locks the runs it prunes with SKIP LOCKED, so they take different runs and
 * none waits for another; a run's log is never touched.
 */
import { UserError } from '../errors.js';
import { checkRetention, parseDuration, type EventRetention, type PruneReport } from '../store/event-retention.js';

/** The `pruneEvents` worker option: which finished runs' events to prune, and how often. */
export interface EventPruning extends EventRetention {
  /** How often (a duration such as '1h', or milliseconds; default '1h'). The first prune runs when the worker starts. */
  readonly every?: string | number;
}

/** What can prune: `PostgresRunBus`. */
export interface EventPruner {
  pruneEvents(retention: EventRetention): Promise<PruneReport>;
}

export interface CheckedPruning {
  readonly retention: EventRetention;
  readonly everyMs: number;
}

/** @throws UserError for a bad policy, or a bus that cannot prune (none, or not PostgresRunBus). */
export function checkPruning(pruning: EventPruning, bus: unknown): CheckedPruning {
  if (typeof pruning !== 'object' || pruning === null) throw new UserError(`A worker's pruneEvents must be an object such as { olderThan: '7d', every: '1h' }, got ${JSON.stringify(pruning)}.`);
  const { every, ...retention } = pruning;
  checkRetention(retention, 'pruneEvents');
  const everyMs = parseDuration(every ?? '1h', 'pruneEvents.every');
  if (everyMs < 1000) throw new UserError(`pruneEvents.every must be at least 1s, got ${JSON.stringify(every)}.`);
  if (typeof (bus as Partial<EventPruner> | undefined)?.pruneEvents !== 'function') throw new UserError("A worker's pruneEvents needs its bus (PostgresRunBus): the events it prunes are the bus's.");
  return { retention, everyMs };
}

/** Prunes now and every `everyMs` until stopped; each outcome is one log line. Returns the stop, which waits for a prune in progress. */
export function startPruning(pruner: EventPruner, pruning: CheckedPruning, log: (line: string) => void): () => Promise<void> {
  let stopped = false;
  let current: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const once = async (): Promise<void> => {
    try {
      const report = await pruner.pruneEvents(pruning.retention);
      if (report.runs.length > 0) log(`pruned ${report.events} stored events of ${report.runs.length} finished runs: ${report.runs.map((run) => run.runId).join(', ')}`);
      else log('pruned no stored events: no finished run has events to prune');
    } catch (error) {
      log(`pruning stored events failed (${(error as Error).message}); tried again in ${pruning.everyMs} ms`);
    }
  };
  const tick = (): void => {
    if (stopped) return;
    current = once().finally(() => {
      if (stopped) return;
      timer = setTimeout(tick, pruning.everyMs);
      timer.unref();
    });
  };
  tick();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await current;
  };
}
