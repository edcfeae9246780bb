/**
 * Lease owners that name their process (src/store/lease-owner.ts): a claimant on the same
 * machine proves a crashed owner dead from /proc, and never mistakes a live one (or one it
 * cannot see) for dead. Real processes: a child that is killed, a zombie, a reused pid.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { leaseOwner, ownerProcessGone, ownerProcessState, parseOwner } from '../../src/store/lease-owner.js';

const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
const pidNamespace = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))![1]!;
const hostKey = `${bootId}/${pidNamespace}`;

/** /proc/<pid>/stat: state (field 3) and start time (field 22). */
function stat(pid: number): { state: string; start: string } {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: rest[0]!, start: rest[19]! };
}

const ownerOf = (pid: number, start: string, key = hostKey): string => `pid ${pid} on ${hostname()} #abcdEF12 (host ${key}, start ${start})`;

async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('lease owners', () => {
  it('name this process: pid, host name, a nonce, the boot id with the pid namespace, and the start time', () => {
    const owner = leaseOwner();
    expect(owner).toMatch(new RegExp(`^pid ${process.pid} on ${hostname()} #[A-Za-z0-9_-]{8} \\(host ${hostKey}, start ${stat(process.pid).start}\\)$`));
    expect(parseOwner(owner)).toEqual({ pid: process.pid, hostname: hostname(), hostKey, startTime: stat(process.pid).start });
    expect(leaseOwner()).not.toBe(owner);
    expect(ownerProcessGone(owner)).toBe(false);
  });

  it('a killed process is provably gone; while it ran it was not', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const pid = child.pid!;
    const owner = ownerOf(pid, stat(pid).start);
    expect([ownerProcessGone(owner), ownerProcessState(owner)]).toEqual([false, 'alive']);
    child.kill('SIGKILL');
    await exited;
    expect([ownerProcessGone(owner), ownerProcessState(owner)]).toEqual([true, 'gone']);
  });

  it('a zombie (exited, not yet reaped by its parent) is gone', async () => {
    // The forked child exits at once; its parent never waits for it.
    const parent = spawn('python3', ['-c', 'import os, time\npid = os.fork()\nif pid == 0: os._exit(0)\nprint(pid, flush=True)\ntime.sleep(30)'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const pid = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()))));
    await until(() => stat(pid).state === 'Z');
    expect(ownerProcessGone(ownerOf(pid, stat(pid).start))).toBe(true);
    parent.kill('SIGKILL');
  });

  it('a pid now used by a process that started at another time is gone (pid reuse)', () => {
    const start = stat(process.pid).start;
    expect(ownerProcessGone(ownerOf(process.pid, start))).toBe(false);
    expect(ownerProcessGone(ownerOf(process.pid, String(Number(start) - 1)))).toBe(true);
    expect(ownerProcessGone(ownerOf(1, String(Number(stat(1).start) + 1)))).toBe(true);
  });

  it('is never gone when it cannot be known: another boot or pid namespace, no identity, another form', () => {
    const missing = 2 ** 22 + 7; // above pid_max: no such process here
    expect(ownerProcessGone(ownerOf(missing, '1'))).toBe(true);
    expect(ownerProcessGone(ownerOf(missing, '1', `00000000-0000-0000-0000-000000000000/${pidNamespace}`))).toBe(false);
    expect(ownerProcessGone(ownerOf(missing, '1', `${bootId}/1`))).toBe(false);
    expect(ownerProcessGone(`pid ${missing} on ${hostname()} #abcdEF12`)).toBe(false);
    expect(ownerProcessGone(`pid ${missing}/abcdEF12`)).toBe(false);
    expect(ownerProcessState(`pid ${missing}/abcdEF12`)).toBe('unknown');
    expect(ownerProcessState(ownerOf(missing, '1', `${bootId}/1`))).toBe('unknown');
    expect(ownerProcessGone('worker-7')).toBe(false);
    expect(parseOwner('worker-7')).toBeUndefined();
  });
});
