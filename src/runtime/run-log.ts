import type { CheckpointEntry, CheckpointHead, CheckpointStore } from '../store/checkpoint-store.js';

/**
 * A run's writer to its CheckpointStore. Every entry is appended as soon as it exists
 * (model reply, each tool result in completion order, turn end), together with the small
 * head; writes are chained so they land in order even on an async store. A failed write is
 * kept and reported at the next `settle()` (the run's checkpoint state), which fails the run.
 */
export class RunLog {
  /** Pending async writes; undefined while the store has answered synchronously so far. */
  private chain: Promise<void> | undefined;
  private error: unknown;

  constructor(
    private readonly store: CheckpointStore,
    readonly runId: string,
    private readonly onSaved: (entries: number) => void,
  ) {}

  append(entries: readonly CheckpointEntry[], head: CheckpointHead): void {
    if (this.chain) {
      this.chain = this.chain.then(() => this.write(entries, head));
      return;
    }
    // A synchronous store (SQLite) is written right away, so the entry is durable before the run moves on.
    const pending = this.write(entries, head);
    if (pending) this.chain = pending;
  }

  private write(entries: readonly CheckpointEntry[], head: CheckpointHead): Promise<void> | undefined {
    if (this.error !== undefined) return undefined;
    try {
      const result = this.store.append(this.runId, entries, head);
      if (result instanceof Promise) {
        return result.then(
          () => this.onSaved(entries.length),
          (error: unknown) => void (this.error ??= error),
        );
      }
      this.onSaved(entries.length);
    } catch (error) {
      this.error ??= error;
    }
    return undefined;
  }

  /** Waits for every write so far; rejects with the first write error. */
  async settle(): Promise<void> {
    await this.chain;
    if (this.error !== undefined) throw this.error;
  }
}
