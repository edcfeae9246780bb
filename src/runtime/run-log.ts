import { asError } from '../errors.js';
import type { AppendFence, CheckpointEntry, CheckpointHead, CheckpointStore } from '../store/checkpoint-store.js';
import { claimLease, type HeldLease } from '../store/claim-lease.js';
import { commitLater } from './group-commit.js';

export { leaseOwner } from '../store/lease-owner.js';

/** Default lease time of a durable run: renewed every third of it while the run lives. */
export const DEFAULT_LEASE_MS = 30_000;

export interface RunLogOptions {
  readonly store: CheckpointStore;
  readonly runId: string;
  /** Who claims the run's lease (every run of one tree shares its root's owner). */
  readonly owner: string;
  readonly leaseMs: number;
  /** How long a claim waits for another owner's lease to expire (default 0: fail at once with RunLocked). A provably dead owner is taken over at once. */
  readonly claimWaitMs?: number;
  /** The claim waits for another owner's lease to expire (called once per lease, before the wait). */
  onWaiting?(held: HeldLease): void;
  /** Entries reached the store (`checkpoint_saved`). */
  onSaved(entries: number): void;
  /** A write or a lease renewal failed: the run must stop at once (its calls abort). Called once. */
  onFailed(error: Error): void;
}

/**
 * A run's single writer to its CheckpointStore. Entries are appended as they happen and
 * written together at the end of the current step (one store append per run per step; on a
 * store with `appendBatch`, one transaction for every run writing in that step: group commit).
 * Each append is fenced by the run's lease and the number of entries it knows are stored, so
 * a second process can never interleave with it. Nothing is written before `open()` (a
 * refused start writes nothing) and a completed head is never overwritten.
 */
export class RunLog {
  private opened = false;
  private seq = 0;
  private buffer: CheckpointEntry[] = [];
  private nextHead: CheckpointHead | undefined;
  private scheduled = false;
  private writing: Promise<void> | undefined;
  private failure: Error | undefined;
  private leased = false;
  private renewTimer: NodeJS.Timeout | undefined;
  private storedStatus: CheckpointHead['status'] | undefined;
  private idle: Array<() => void> = [];
  private closing: Promise<void> | undefined;

  constructor(private readonly options: RunLogOptions) {}

  get runId(): string {
    return this.options.runId;
  }

  get store(): CheckpointStore {
    return this.options.store;
  }

  get owner(): string {
    return this.options.owner;
  }

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /** Entries buffered or being written. */
  get pending(): boolean {
    // Buffered entries always come with a head to write, so the head alone says whether anything waits.
    return this.nextHead !== undefined || this.writing !== undefined;
  }

  /**
   * Takes the run's lease (when the store keeps leases) and starts renewing it: at once from
   * a provably dead owner, else after waiting up to `claimWaitMs` for the holder's expiry
   * (see `claimLease`).
   * @throws RunLocked when another owner holds it; nothing is written then.
   */
  async claim(): Promise<void> {
    const { store, runId, owner, leaseMs } = this.options;
    if (!store.claim) return;
    const waitMs = this.options.claimWaitMs ?? 0;
    const onWait = (held: HeldLease): void => {
      // Said twice: on the run's stream (lease_waiting) and in the process log, since a silent wait looks like a hang.
      console.warn(`troupe: run '${runId}' is leased to '${held.owner}' until ${new Date(held.expiresAt).toISOString()}; waiting for the lease to expire (claimWaitMs ${waitMs}).`);
      this.options.onWaiting?.(held);
    };
    await claimLease(store, runId, owner, leaseMs, { waitMs, onWait });
    this.leased = true;
    this.renewTimer = setInterval(() => void this.renew(), Math.max(1, Math.floor(leaseMs / 3)));
    this.renewTimer.unref();
  }

  /** Writes are allowed from now on, after the `seq` entries already stored. */
  open(seq: number, storedStatus?: CheckpointHead['status']): void {
    this.opened = true;
    this.seq = seq;
    this.storedStatus = storedStatus;
  }

  get isOpen(): boolean {
    return this.opened;
  }

  append(entries: readonly CheckpointEntry[], head: CheckpointHead): void {
    if (!this.opened || this.failure) return;
    // A completed run stays completed in the store (a later failure, e.g. of its session append, is the caller's to see).
    if (this.storedStatus === 'completed' && head.status !== 'completed') return;
    for (const entry of entries) this.buffer.push(entry);
    this.nextHead = head;
    this.schedule();
  }

  /** Waits until everything appended so far is stored. @throws the first write error. */
  async settle(): Promise<void> {
    while (this.pending && !this.failure) await new Promise<void>((resolve) => this.idle.push(resolve));
    if (this.failure) throw this.failure;
  }

  /** Settles the writes (errors were reported through onFailed), stops renewing and releases the lease. Never rejects. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      await this.settle().catch(() => undefined);
      this.stopRenewing();
      if (this.leased && this.options.store.release) {
        this.leased = false;
        try {
          await this.options.store.release(this.options.runId, this.options.owner);
        } catch {
          // The lease expires on its own; a failed release loses nothing.
        }
      }
    })());
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    commitLater(this.options.store, this);
  }

  /** The append this log would write now (GroupCommit calls it once per flush). @internal */
  takeRequest(): { runId: string; entries: CheckpointEntry[]; head: CheckpointHead; fence: AppendFence | undefined } | undefined {
    this.scheduled = false;
    if (!this.nextHead || this.failure) return undefined;
    const entries = this.buffer;
    const head = this.nextHead;
    this.buffer = [];
    this.nextHead = undefined;
    return { runId: this.options.runId, entries, head, fence: this.leased ? { owner: this.options.owner, seq: this.seq } : undefined };
  }

  /** The store answered one request of this log. @internal */
  written(count: number, head: CheckpointHead, error: unknown): void {
    if (error !== undefined) return this.fail(error);
    this.seq += count;
    this.storedStatus = head.status;
    this.options.onSaved(count);
    if (this.nextHead) this.schedule();
    else this.wake();
  }

  /** Marks an asynchronous write in flight; its answer comes through `written`. @internal */
  track(write: Promise<void>): void {
    this.writing = write.finally(() => {
      this.writing = undefined;
      if (this.nextHead) this.schedule();
      else this.wake();
    });
  }

  private async renew(): Promise<void> {
    const { store, runId, owner, leaseMs } = this.options;
    if (!this.leased || !store.renew) return;
    try {
      await store.renew(runId, owner, leaseMs);
    } catch (error) {
      this.leased = false;
      this.fail(error);
    }
  }

  private fail(error: unknown): void {
    if (this.failure) return;
    // A store that threw a non-Error is not a lock conflict: asError names what was thrown.
    this.failure = asError(error);
    this.stopRenewing();
    this.options.onFailed(this.failure);
    this.wake();
  }

  private stopRenewing(): void {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = undefined;
  }

  private wake(): void {
    const waiting = this.idle;
    this.idle = [];
    for (const resolve of waiting) resolve();
  }
}
