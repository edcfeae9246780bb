import { RunLocked, UserError } from '../errors.js';
import { checkOptionKeys } from '../option-keys.js';
import type { Message, Usage } from '../types.js';
import { CHECKPOINT_SCHEMA_VERSION, checkEntries, checkHead } from './format.js';
export type { AbortEntry, AppendFence, AppendRequest, ApprovalDecisionEntry, ApprovalRequestEntry, CheckpointEntry, CheckpointEntryKind, CheckpointHead, CheckpointStore, ClaimOptions, ExtraEntry, InputSource, Lease, ListRunsOptions, RunStatus, RunSummary, StoredRun, StoredRunStatus, WaitRequestEntry, WaitResolutionEntry } from './records.js';
import type { AppendFence, AppendRequest, ApprovalDecisionEntry, ApprovalRequestEntry, CheckpointEntry, CheckpointEntryKind, CheckpointHead, CheckpointStore, ClaimOptions, ExtraEntry, InputSource, Lease, ListRunsOptions, RunStatus, RunSummary, StoredRun, StoredRunStatus, WaitRequestEntry, WaitResolutionEntry } from './records.js';

export interface MemoryCheckpointStoreOptions {
  /** Clock for `createdAt`/`updatedAt` and lease expiry (default `Date.now`). */
  readonly now?: () => number;
}

interface MemoryRun {
  entries: CheckpointEntry[];
  head: CheckpointHead;
  createdAt: number;
  updatedAt: number;
}

/**
 * In-process store. Entries are validated like the SQLite store validates them (so a test
 * on memory fails where SQLite would), then kept by reference: callers must not mutate them.
 * Leases and fencing behave as in the SQLite store, within this one process.
 */
export class MemoryCheckpointStore implements CheckpointStore {
  private readonly runs = new Map<string, MemoryRun>();
  private readonly leases = new Map<string, Lease>();
  private readonly now: () => number;

  constructor(options: MemoryCheckpointStoreOptions = {}) {
    checkOptionKeys(options, ['now'], 'MemoryCheckpointStore');
    this.now = options.now ?? Date.now;
  }

  append(runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead, fence?: AppendFence): void {
    checkRunId(runId);
    const where = `run '${runId}'`;
    checkEntries(entries, where);
    checkHead(head, where);
    const run = this.runs.get(runId);
    const now = this.now();
    if (fence) checkFence(runId, fence, this.leases.get(runId), run?.entries.length ?? 0, now);
    if (run) {
      for (const entry of entries) run.entries.push(entry);
      run.head = head;
      run.updatedAt = now;
    } else {
      this.runs.set(runId, { entries: [...entries], head, createdAt: now, updatedAt: now });
    }
  }

  load(runId: string): StoredRun | undefined {
    const run = this.runs.get(runId);
    if (!run) return undefined;
    const lease = this.leases.get(runId);
    return { entries: [...run.entries], head: run.head, schemaVersion: CHECKPOINT_SCHEMA_VERSION, ...(lease ? { lease } : {}) };
  }

  list(options: ListRunsOptions = {}): RunSummary[] {
    const statuses = statusFilter(options);
    const out: RunSummary[] = [];
    for (const [runId, run] of this.runs) {
      if (statuses && !statuses.includes(run.head.status)) continue;
      const lease = this.leases.get(runId);
      out.push({ runId, schemaVersion: CHECKPOINT_SCHEMA_VERSION, head: run.head, entries: run.entries.length, createdAt: run.createdAt, updatedAt: run.updatedAt, ...(lease ? { lease } : {}) });
    }
    return out;
  }

  /** Returns whether the run existed. */
  delete(runId: string): boolean {
    this.leases.delete(runId);
    return this.runs.delete(runId);
  }

  claim(runId: string, owner: string, ttlMs: number, options: ClaimOptions = {}): Lease {
    checkLeaseRequest(runId, owner, ttlMs);
    const now = this.now();
    const held = this.leases.get(runId);
    if (held && !mayClaim(held.owner, held.expiresAt, owner, now, options)) throw new RunLocked(runId, { owner: held.owner, expiresAt: held.expiresAt });
    const lease = { runId, owner, expiresAt: now + ttlMs };
    this.leases.set(runId, lease);
    return lease;
  }

  renew(runId: string, owner: string, ttlMs: number): Lease {
    checkLeaseRequest(runId, owner, ttlMs);
    const held = this.leases.get(runId);
    if (!held || held.owner !== owner) throw lostLease(runId, owner, held);
    const lease = { runId, owner, expiresAt: this.now() + ttlMs };
    this.leases.set(runId, lease);
    return lease;
  }

  release(runId: string, owner: string): void {
    if (this.leases.get(runId)?.owner === owner) this.leases.delete(runId);
  }

  close(): void {}
}

/**
 * The fencing rule every store applies before an append writes anything: `fence.owner` holds
 * the lease (an expired lease nobody took over still counts as held) and exactly `fence.seq`
 * entries are stored. @throws RunLocked otherwise. @internal
 */
export function checkFence(runId: string, fence: AppendFence, lease: Lease | undefined, stored: number, _now: number): void {
  if (!lease || lease.owner !== fence.owner) throw lostLease(runId, fence.owner, lease);
  if (stored !== fence.seq) {
    throw new RunLocked(runId, {
      owner: lease.owner,
      message: `Run '${runId}' moved on: ${stored} entries are stored but its writer expected ${fence.seq}; nothing was written.`,
    });
  }
}

/**
 * Whether `owner` may take a lease `holder` holds until `expiresAt`: it is its own, it
 * expired, or the claimant takes over from exactly that holder. @internal
 */
export function mayClaim(holder: string, expiresAt: number, owner: string, now: number, options: ClaimOptions): boolean {
  return holder === owner || expiresAt <= now || (options.takeOverFrom !== undefined && holder === options.takeOverFrom);
}

/** @internal */
export function lostLease(runId: string, owner: string, held: Lease | undefined): RunLocked {
  if (!held) return new RunLocked(runId, { message: `Run '${runId}' is not leased to '${owner}' (no lease is held); nothing was written.` });
  return new RunLocked(runId, { owner: held.owner, expiresAt: held.expiresAt });
}

/** @internal */
export function statusFilter(options: ListRunsOptions): readonly StoredRunStatus[] | undefined {
  const { status } = options;
  if (status === undefined) return undefined;
  return typeof status === 'string' ? [status] : (status as readonly StoredRunStatus[]);
}

/** @internal Throws a UserError for a claim or renewal that cannot be a lease. */
export function checkLeaseRequest(runId: unknown, owner: unknown, ttlMs: unknown): void {
  checkRunId(runId);
  checkLeaseTerms(owner, ttlMs);
}

/** @internal Throws a UserError unless `owner` is a non-empty string and `ttlMs` a positive number. */
export function checkLeaseTerms(owner: unknown, ttlMs: unknown): void {
  if (typeof owner !== 'string' || owner.length === 0) throw new UserError(`A lease owner must be a non-empty string, got ${JSON.stringify(owner)}.`);
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs <= 0) throw new UserError(`A lease TTL must be a positive number of milliseconds, got ${String(ttlMs)}.`);
}

/** @internal */
export function checkRunId(runId: unknown): void {
  if (typeof runId !== 'string' || runId.length === 0) throw new UserError(`A run id must be a non-empty string, got ${JSON.stringify(runId)}.`);
}
