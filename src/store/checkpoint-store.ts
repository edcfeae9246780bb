import { UserError } from '../errors.js';
import type { Message, Usage } from '../types.js';
import { CHECKPOINT_SCHEMA_VERSION, checkEntries, checkHead } from './format.js';

/**
 * One appended record of a run's log (format: src/store/format.md).
 * `input` opens the run, `reply` is a model reply of a turn, `result` is one tool result of
 * that turn (in completion order), `turn_end` closes the turn.
 */
export type CheckpointEntry =
  | { readonly kind: 'input'; readonly message: Message }
  | { readonly kind: 'reply'; readonly turn: number; readonly message: Message }
  | { readonly kind: 'result'; readonly turn: number; readonly message: Message }
  | { readonly kind: 'turn_end'; readonly turn: number };

export type CheckpointEntryKind = CheckpointEntry['kind'];

export type RunStatus = 'running' | 'completed' | 'failed' | 'interrupted';

/** The small, rewritten part of a run's record. */
export interface CheckpointHead {
  readonly agent: string;
  readonly turn: number;
  readonly usage: Usage;
  readonly status: RunStatus;
  readonly output?: string;
  readonly error?: { readonly name: string; readonly message: string };
}

/** A run as `load` returns it: every entry in append order and the latest head. */
export interface StoredRun {
  readonly entries: readonly CheckpointEntry[];
  readonly head: CheckpointHead;
  /** Record format the run was written with (stores of this package always set it). */
  readonly schemaVersion?: number;
}

/** One row of `list()`: a run's head without its entries. */
export interface RunSummary {
  readonly runId: string;
  readonly schemaVersion: number;
  readonly head: CheckpointHead;
  /** Number of stored entries. */
  readonly entries: number;
  /** Milliseconds since the epoch of the first and the latest append. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface ListRunsOptions {
  /** Only runs whose head has one of these statuses. */
  readonly status?: RunStatus | readonly RunStatus[];
}

type MaybePromise<T> = T | Promise<T>;

/**
 * Append-only run log: entries are only ever appended; the head is replaced. Only `append`
 * and `load` are required; resume uses `delete` for `ifRunExists: "restart"`.
 */
export interface CheckpointStore {
  /** Appends `entries` (possibly none) after the run's stored ones and replaces its head, atomically. */
  append(runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead): MaybePromise<void>;
  /** The run's entries in append order and its head; undefined when the store has no such run. */
  load(runId: string): MaybePromise<StoredRun | undefined>;
  /** Heads of the stored runs, oldest first (by first append). */
  list?(options?: ListRunsOptions): MaybePromise<readonly RunSummary[]>;
  /** Removes a run (used by `ifRunExists: "restart"`). */
  delete?(runId: string): MaybePromise<void | boolean>;
  /** Releases the store's resources; a closed store refuses further use. */
  close?(): MaybePromise<void>;
}

export interface MemoryCheckpointStoreOptions {
  /** Clock for `createdAt`/`updatedAt` (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * In-process store. Entries are validated like the SQLite store validates them (so a test
 * on memory fails where SQLite would), then kept by reference: callers must not mutate them.
 */
export class MemoryCheckpointStore implements CheckpointStore {
  private readonly runs = new Map<string, { entries: CheckpointEntry[]; head: CheckpointHead; createdAt: number; updatedAt: number }>();
  private readonly now: () => number;

  constructor(options: MemoryCheckpointStoreOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  append(runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead): void {
    checkRunId(runId);
    checkEntries(entries, `run '${runId}'`);
    checkHead(head, `run '${runId}'`);
    const now = this.now();
    const run = this.runs.get(runId);
    if (run) {
      for (const entry of entries) run.entries.push(entry);
      run.head = head;
      run.updatedAt = now;
    } else {
      this.runs.set(runId, { entries: [...entries], head, createdAt: now, updatedAt: now });
    }
  }

  load(runId: string): { entries: readonly CheckpointEntry[]; head: CheckpointHead; schemaVersion: number } | undefined {
    const run = this.runs.get(runId);
    return run && { entries: [...run.entries], head: run.head, schemaVersion: CHECKPOINT_SCHEMA_VERSION };
  }

  list(options: ListRunsOptions = {}): RunSummary[] {
    const statuses = statusFilter(options);
    const out: RunSummary[] = [];
    for (const [runId, run] of this.runs) {
      if (statuses && !statuses.includes(run.head.status)) continue;
      out.push({ runId, schemaVersion: CHECKPOINT_SCHEMA_VERSION, head: run.head, entries: run.entries.length, createdAt: run.createdAt, updatedAt: run.updatedAt });
    }
    return out;
  }

  /** Returns whether the run existed. */
  delete(runId: string): boolean {
    return this.runs.delete(runId);
  }

  close(): void {}
}

/** @internal */
export function statusFilter(options: ListRunsOptions): readonly RunStatus[] | undefined {
  const { status } = options;
  if (status === undefined) return undefined;
  return typeof status === 'string' ? [status] : (status as readonly RunStatus[]);
}

/** @internal */
export function checkRunId(runId: unknown): void {
  if (typeof runId !== 'string' || runId.length === 0) throw new UserError(`A run id must be a non-empty string, got ${JSON.stringify(runId)}.`);
}
