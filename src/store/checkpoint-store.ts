import type { Message, Usage } from '../types.js';

/** One appended record of a run's log. */
export type CheckpointEntry =
  | { readonly kind: 'input'; readonly message: Message }
  | { readonly kind: 'reply'; readonly turn: number; readonly message: Message }
  | { readonly kind: 'result'; readonly turn: number; readonly message: Message }
  | { readonly kind: 'turn_end'; readonly turn: number };

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

/** Append-only run log: entries are only ever appended; the head is replaced. */
export interface CheckpointStore {
  append(runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead): void | Promise<void>;
  load(runId: string): { entries: readonly CheckpointEntry[]; head: CheckpointHead } | undefined | Promise<{ entries: readonly CheckpointEntry[]; head: CheckpointHead } | undefined>;
  /** Removes a run (used by `ifRunExists: "restart"`). */
  delete?(runId: string): void | Promise<void>;
}

export class MemoryCheckpointStore implements CheckpointStore {
  private readonly runs = new Map<string, { entries: CheckpointEntry[]; head: CheckpointHead }>();

  append(runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead): void {
    const run = this.runs.get(runId);
    if (run) {
      for (const entry of entries) run.entries.push(entry);
      run.head = head;
    } else {
      this.runs.set(runId, { entries: [...entries], head });
    }
  }

  load(runId: string): { entries: readonly CheckpointEntry[]; head: CheckpointHead } | undefined {
    const run = this.runs.get(runId);
    return run && { entries: [...run.entries], head: run.head };
  }

  delete(runId: string): void {
    this.runs.delete(runId);
  }
}
