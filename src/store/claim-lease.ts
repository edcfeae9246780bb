import { RunLocked } from '../errors.js';
import type { CheckpointStore, Lease } from './checkpoint-store.js';
import { ownerProcessGone } from './lease-owner.js';

/** Another owner holds the lease the claimant waits for. */
export interface HeldLease {
  readonly owner: string;
  /** Milliseconds since the epoch. */
  readonly expiresAt: number;
}

export interface ClaimLeaseOptions {
  /** How long to wait for a live (or unprovably dead) owner's lease to expire; default 0: RunLocked at once. */
  readonly waitMs?: number;
  /** Called once per lease the claimant starts waiting for (before it waits). */
  readonly onWait?: (held: HeldLease) => void;
  /** Clock for the wait (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * Claims `runId`'s lease for `owner` on a store that keeps leases:
 * 1. a free, expired or own lease is taken;
 * 2. a lease whose owner's process is provably gone (`ownerProcessGone`: same machine, boot
 *    and pid namespace, pid gone or reused) is taken over at once, atomically from exactly
 *    that owner (`takeOverFrom`), which can then never append or renew again;
 * 3. any other lease is waited for until it expires, when that is within `waitMs`
 *    (`onWait` says so first), then claimed again.
 * @throws RunLocked (naming the holder and its expiry) when the lease stays held beyond `waitMs`.
 */
export async function claimLease(store: CheckpointStore, runId: string, owner: string, ttlMs: number, options: ClaimLeaseOptions = {}): Promise<Lease | undefined> {
  if (!store.claim) return undefined;
  const now = options.now ?? Date.now;
  const deadline = now() + (options.waitMs ?? 0);
  // A store that cannot take over (a custom one without `takeOverFrom`) refuses again: then the lease is waited for.
  const triedTakeover = new Set<string>();
  let announced: string | undefined;
  const attempt = async (takeOverFrom?: string): Promise<Lease | RunLocked> => {
    try {
      return await store.claim!(runId, owner, ttlMs, ...(takeOverFrom !== undefined ? [{ takeOverFrom }] : []));
    } catch (error) {
      if (error instanceof RunLocked) return error;
      throw error;
    }
  };
  for (;;) {
    let locked = await attempt();
    if (!(locked instanceof RunLocked)) return locked;
    // A refused takeover (someone else claimed it first) tells who holds it now.
    while (locked.owner !== undefined && !triedTakeover.has(locked.owner) && ownerProcessGone(locked.owner)) {
      triedTakeover.add(locked.owner);
      const taken: Lease | RunLocked = await attempt(locked.owner);
      if (!(taken instanceof RunLocked)) return taken;
      locked = taken;
    }
    const holder = locked.owner;
    if (holder === undefined || locked.expiresAt === undefined || locked.expiresAt > deadline) throw locked;
    const key = `${holder}@${locked.expiresAt}`;
    if (announced !== key) {
      announced = key;
      options.onWait?.({ owner: holder, expiresAt: locked.expiresAt });
    }
    const expiresAt = locked.expiresAt;
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, expiresAt - now() + 1)));
  }
}
