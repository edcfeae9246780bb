import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { nanoid } from 'nanoid';

/**
 * Lease owners that say who they are, so a claimant can prove a crashed owner dead:
 *
 *   `pid 4242 on build-7 #k3J9xQ2a (host ba6cb3a5-881a-4106-ad9a-57a7cd7fd3ac/4026531836, start 159544)`
 *
 * - `host`: the boot id (`/proc/sys/kernel/random/boot_id`) and the pid namespace
 *   (`/proc/self/ns/pid`): two processes can compare pids only within one boot of one
 *   machine and one pid namespace (containers on one machine share the boot id, not the
 *   namespace). The host name is for people; it is not trusted (two machines may share one).
 * - `start`: the process's start time in clock ticks after boot (`/proc/<pid>/stat` field
 *   22), so a pid the kernel gave to a new process is not mistaken for the owner.
 *
 * Where the platform tells neither (no `/proc`), the parenthesis is left out and the owner
 * can never be proved dead: claimants wait for its lease to expire.
 */

/** What a lease owner string says about its process. */
export interface OwnerIdentity {
  readonly pid: number;
  readonly hostname: string;
  /** `<boot id>/<pid namespace>`; undefined when the owner did not know it. */
  readonly hostKey: string | undefined;
  /** Start time in clock ticks after boot; undefined when the owner did not know it. */
  readonly startTime: string | undefined;
}

const OWNER = /^pid (\d+) on (.*) #[A-Za-z0-9_-]+(?: \(host ([^,()]+), start (\d+)\))?$/;

interface ThisProcess {
  readonly hostKey: string | undefined;
  readonly startTime: string | undefined;
}

let self: ThisProcess | undefined;

/** This process's host key and start time, read once. */
function thisProcess(): ThisProcess {
  if (self) return self;
  let hostKey: string | undefined;
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const namespace = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
    if (boot && namespace) hostKey = `${boot}/${namespace}`;
  } catch {
    hostKey = undefined; // not Linux, or /proc hidden: owners of this process cannot be proved dead
  }
  const own = hostKey ? processStart(process.pid) : 'gone';
  self = { hostKey, startTime: own === 'gone' ? undefined : own.startTime };
  return self;
}

/**
 * A lease owner unique to one run handle: this process's identity (see the file comment)
 * plus a random nonce.
 */
export function leaseOwner(): string {
  const { hostKey, startTime } = thisProcess();
  const identity = hostKey && startTime ? ` (host ${hostKey}, start ${startTime})` : '';
  return `pid ${process.pid} on ${hostname()} #${nanoid(8)}${identity}`;
}

/** The identity an owner string carries; undefined for owners of another form (a custom `owner`, an older troupe). */
export function parseOwner(owner: string): OwnerIdentity | undefined {
  const match = OWNER.exec(owner);
  if (!match) return undefined;
  return { pid: Number(match[1]), hostname: match[2]!, hostKey: match[3], startTime: match[4] };
}

/**
 * What this process can prove about `owner`'s process:
 * - `gone`: it ran on this machine, in this boot and pid namespace, and its pid is gone, a
 *   zombie, or now belongs to a process that started at another time;
 * - `alive`: it runs on this machine now (it may still be paused);
 * - `unknown`: another machine, an owner string without an identity, an unreadable `/proc`.
 */
export function ownerProcessState(owner: string): 'gone' | 'alive' | 'unknown' {
  const identity = parseOwner(owner);
  if (!identity?.hostKey || identity.startTime === undefined) return 'unknown';
  const here = thisProcess();
  if (!here.hostKey || identity.hostKey !== here.hostKey) return 'unknown';
  if (identity.pid === process.pid) return identity.startTime === here.startTime ? 'alive' : 'gone';
  const found = processStart(identity.pid);
  if (found === 'gone') return 'gone';
  if (found.startTime === undefined) return 'unknown';
  return found.startTime !== identity.startTime || found.zombie ? 'gone' : 'alive';
}

/**
 * Whether `owner`'s process provably no longer exists (`ownerProcessState` is `gone`). False
 * whenever that cannot be known: the caller must then wait for the lease.
 */
export function ownerProcessGone(owner: string): boolean {
  return ownerProcessState(owner) === 'gone';
}

/** `/proc/<pid>/stat`: the start time (field 22) and whether the process is a zombie; `gone` when there is no such process. */
function processStart(pid: number): 'gone' | { startTime: string | undefined; zombie: boolean } {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : { startTime: undefined, zombie: false };
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state), so field 22 is rest[19].
  const state = rest[0];
  return { startTime: rest[19], zombie: state === 'Z' || state === 'X' };
}
