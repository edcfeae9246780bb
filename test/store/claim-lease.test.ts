/**
 * claimLease (src/store/claim-lease.ts): a provably dead owner is taken over at once; any
 * other holder is waited for (and said so) within the allowed wait, else RunLocked.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { RunLocked } from '../../src/errors.js';
import { MemoryCheckpointStore, type CheckpointStore } from '../../src/store/checkpoint-store.js';
import { claimLease, type HeldLease } from '../../src/store/claim-lease.js';
import { leaseOwner, parseOwner } from '../../src/store/lease-owner.js';

/** The owner string a process `pid` of this machine would have written. */
function ownerOfProcess(pid: number): string {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const start = text.slice(text.lastIndexOf(')') + 2).split(' ')[19]!;
  return `pid ${pid} on ${hostname()} #deadBEEF (host ${parseOwner(leaseOwner())!.hostKey}, start ${start})`;
}

async function deadOwner(): Promise<string> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  const owner = ownerOfProcess(child.pid!);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return owner;
}

describe('claimLease', () => {
  it('takes over at once from an owner whose process is gone, without waiting or saying so', async () => {
    const store = new MemoryCheckpointStore();
    const dead = await deadOwner();
    const held = store.claim('r1', dead, 3_600_000);
    const waits: HeldLease[] = [];
    const me = leaseOwner();
    const lease = await claimLease(store, 'r1', me, 1000, { onWait: (h) => waits.push(h) });
    expect(lease?.owner).toBe(me);
    expect(waits).toEqual([]);
    expect(() => store.renew('r1', dead, 1000)).toThrow(RunLocked);
    expect(held.expiresAt).toBeGreaterThan(lease!.expiresAt);
  });

  it('refuses at once with RunLocked naming a live owner and its expiry when no wait is allowed', async () => {
    const store = new MemoryCheckpointStore();
    const live = leaseOwner();
    const held = store.claim('r1', live, 60_000);
    const waits: HeldLease[] = [];
    const error = await claimLease(store, 'r1', leaseOwner(), 1000, { onWait: (h) => waits.push(h) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunLocked);
    expect([(error as RunLocked).owner, (error as RunLocked).expiresAt]).toEqual([live, held.expiresAt]);
    expect(waits).toEqual([]);
  });

  it('waits for a live owner’s lease to expire when allowed, says so once, then claims', async () => {
    const store = new MemoryCheckpointStore();
    const live = leaseOwner();
    const held = store.claim('r1', live, 30);
    const waits: HeldLease[] = [];
    const me = leaseOwner();
    const lease = await claimLease(store, 'r1', me, 1000, { waitMs: 60_000, onWait: (h) => waits.push(h) });
    expect(waits).toEqual([{ owner: live, expiresAt: held.expiresAt }]);
    expect(lease?.owner).toBe(me);
  });

  it('a store that cannot take over is waited on like a live owner (no endless retry)', async () => {
    const memory = new MemoryCheckpointStore();
    const dead = await deadOwner();
    const held = memory.claim('r1', dead, 30);
    const claims: unknown[] = [];
    // A custom store of an older kind: it ignores the takeover option.
    const store: CheckpointStore = { append: (...a) => memory.append(...a), load: (id) => memory.load(id), claim: (id, owner, ttl, options) => (claims.push(options), memory.claim(id, owner, ttl)) };
    const waits: HeldLease[] = [];
    const lease = await claimLease(store, 'r1', 'me', 1000, { waitMs: 60_000, onWait: (h) => waits.push(h) });
    expect(lease?.owner).toBe('me');
    expect(waits).toEqual([{ owner: dead, expiresAt: held.expiresAt }]);
    expect(claims).toEqual([undefined, { takeOverFrom: dead }, undefined]);
  });
});
