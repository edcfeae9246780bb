/**
 * CPU time of processes from /proc (Linux), for bench/workers.ts: where a cluster's time goes.
 * A PostgreSQL server is found by the port in its command line (its backends are its child
 * processes); its CPU is the postmaster's own, its reaped children's (cutime/cstime, so a
 * backend that exited between two samples still counts) and its live children's.
 */
import { readFileSync, readdirSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

interface Stat {
  readonly ppid: number;
  /** Own user + system time, ms. */
  readonly own: number;
  /** Reaped children's user + system time, ms. */
  readonly children: number;
}

function stat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces) start at state, field 3.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const tick = (i: number) => (Number(fields[i - 3]) * 1000) / TICKS_PER_SECOND;
    return { ppid: Number(fields[1]), own: tick(14) + tick(15), children: tick(16) + tick(17) };
  } catch {
    return undefined;
  }
}

/** A process's own CPU time in ms (undefined once it is gone). */
export function processCpuMs(pid: number): number | undefined {
  return stat(pid)?.own;
}

function pids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** The pid of the PostgreSQL server listening on `port` (its command line names the port), if it runs here. */
export function findPostmaster(port: string): number | undefined {
  for (const pid of pids()) {
    let cmdline: string[];
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!/\/postgres$/.test(cmdline[0] ?? '')) continue;
    // Backends rewrite their command line ("postgres: user db host"): only the postmaster keeps its flags.
    const p = cmdline.indexOf('-p');
    if (p >= 0 && cmdline[p + 1] === port) return pid;
  }
  return undefined;
}

/** The PostgreSQL server's total CPU time so far, ms (see the file comment). */
export function postgresCpuMs(postmaster: number): number {
  const own = stat(postmaster);
  if (!own) return 0;
  let total = own.own + own.children;
  for (const pid of pids()) {
    const s = stat(pid);
    if (s && s.ppid === postmaster) total += s.own;
  }
  return total;
}

/**
 * CPU time the whole machine spent busy so far, ms summed over cores (/proc/stat: everything
 * but idle and iowait). Includes other work on a shared machine: compare it with ours.
 */
export function machineBusyMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return ((user + nice + system + irq + softirq + steal) * 1000) / TICKS_PER_SECOND;
}
