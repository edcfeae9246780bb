/**
 * The rules of event retention (`troupe db prune`, a worker's `pruneEvents`), free of any
 * driver: which finished runs lose their stored events, durations, and what a prune reports.
 */
import { UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import type { StoredRunStatus } from '../run-status.js';

/** The `type` of the marker row a pruned run keeps in `troupe_events` (never a run event's type). */
export const PRUNED_EVENTS_TYPE = 'troupe.events_pruned';

/** What the marker row's `data` holds. */
export interface PrunedEventsMarker {
  readonly type: typeof PRUNED_EVENTS_TYPE;
  readonly runId: string;
  /** The id of the last event pruned (the marker row has this id): a cursor below it was pruned. */
  readonly through: number;
  /** When it was pruned (epoch ms). */
  readonly prunedAt: number;
}

/**
 * Which finished runs keep their events. A run's events are pruned when every rule given
 * would drop them: older than `olderThan` and not among the `keepLast` runs that finished
 * last. At least one rule is needed.
 */
export interface EventRetention {
  /** Prune the events of runs that finished at least this long ago: `'7d'`, `'12h'`, `'30m'`, `'45s'`, `'500ms'`, or milliseconds. */
  readonly olderThan?: string | number;
  /** Keep the events of this many runs, the ones that finished last (among finished runs that still have events). */
  readonly keepLast?: number;
}

/** One run whose events were (or, in a dry run, would be) pruned. */
export interface PrunedRun {
  readonly runId: string;
  readonly status: StoredRunStatus;
  /** When the run's head was last stored, i.e. when it finished (epoch ms). */
  readonly finishedAt: number;
  /** Events deleted (or to delete). */
  readonly events: number;
}

export interface PruneReport {
  readonly dryRun: boolean;
  /** Oldest finished first. */
  readonly runs: readonly PrunedRun[];
  /** Events deleted (or to delete) in all. */
  readonly events: number;
}

/** A checked retention: milliseconds and a count. */
export interface RetentionRule {
  readonly olderThanMs: number | undefined;
  readonly keepLast: number | undefined;
}

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * Parses a duration: a whole number with a unit (`ms`, `s`, `m`, `h`, `d`, `w`), or a
 * non-negative whole number of milliseconds. @throws UserError naming `what`.
 */
export function parseDuration(value: unknown, what: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  const match = typeof value === 'string' ? /^(\d+)(ms|s|m|h|d|w)$/.exec(value.trim()) : null;
  const ms = match ? Number(match[1]) * UNITS[match[2]!]! : NaN;
  if (!Number.isSafeInteger(ms)) throw new UserError(`${what} must be a duration such as 7d, 12h, 30m, 45s or 500ms, got ${JSON.stringify(value)}.`);
  return ms;
}

const RETENTION_KEYS = optionKeys<EventRetention>({ olderThan: true, keepLast: true });

/** @throws UserError for unknown keys, a bad duration or count, or neither rule given. */
export function checkRetention(retention: EventRetention, where: string): RetentionRule {
  if (typeof retention !== 'object' || retention === null) throw new UserError(`${where} must be an object such as { olderThan: '7d' }, got ${JSON.stringify(retention)}.`);
  checkOptionKeys(retention, RETENTION_KEYS, where);
  const { olderThan, keepLast } = retention;
  if (olderThan === undefined && keepLast === undefined) throw new UserError(`${where} needs olderThan and/or keepLast: which finished runs' events to prune.`);
  if (keepLast !== undefined && !(Number.isSafeInteger(keepLast) && keepLast >= 0)) throw new UserError(`${where}.keepLast must be a whole number of runs (0 or more), got ${JSON.stringify(keepLast)}.`);
  return { olderThanMs: olderThan === undefined ? undefined : parseDuration(olderThan, `${where}.olderThan`), keepLast };
}
