import type { AppendFence, CheckpointEntry, CheckpointHead, CheckpointStore, ClaimOptions, Lease, ListRunsOptions } from '../store/checkpoint-store.js';

/** A store whose lease methods a worker can hand to a run (the PostgreSQL store is one). */
export type LeasingStore = CheckpointStore & Required<Pick<CheckpointStore, 'claim' | 'renew' | 'release'>>;

/**
 * The view of `store` a worker gives the runs it took: every write is made as `owner`, the
 * worker's lease holder, so a run can only write while the worker holds its lease.
 * - Appends to a run this view loaded (or started empty) are fenced with the entry count it
 *   knows, so a worker that lost its lease writes nothing (RunLocked), even before the runtime
 *   fences appends itself; a fence the runtime passes is kept, its owner made `owner`.
 * - `claim`, `renew` and `release` act for `owner`, whatever owner the runtime names: the
 *   worker already holds the lease, so the run's own claim is a renewal, not a conflict.
 * Appends of one run must not overlap (the runtime's RunLog chains them).
 */
export function ownedStore(store: LeasingStore, owner: string): LeasingStore {
  const counts = new Map<string, number>();
  return {
    async load(runId: string) {
      const run = await store.load(runId);
      counts.set(runId, run?.entries.length ?? 0);
      return run;
    },
    async append(runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead, fence?: AppendFence): Promise<void> {
      const seq = fence?.seq ?? counts.get(runId);
      await store.append(runId, entries, head, seq === undefined ? undefined : { owner, seq });
      if (seq !== undefined) counts.set(runId, seq + entries.length);
    },
    ...(store.list ? { list: (options?: ListRunsOptions) => store.list!(options) } : {}),
    async delete(runId: string) {
      counts.delete(runId);
      return store.delete ? store.delete(runId) : undefined;
    },
    claim: (runId: string, _owner: string, ttlMs: number, options?: ClaimOptions): Promise<Lease> | Lease => store.claim(runId, owner, ttlMs, options),
    renew: (runId: string, _owner: string, ttlMs: number): Promise<Lease> | Lease => store.renew(runId, owner, ttlMs),
    release: (runId: string): Promise<void> | void => store.release(runId, owner),
  };
}
