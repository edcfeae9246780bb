/**
 * `troupe worker` and `troupe serve` as real child processes (`node --import tsx
 * src/cli/main.ts …` from the repository root), for the scale-out test and
 * `bench/workers.ts`. Each child leads its own process group, so `kill` reaches everything it
 * started; `killAll` is what a test's afterAll calls, failure or not. No vitest in here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is test/cluster/troupe-process.ts). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The agents module both the workers and the servers load. */
export const CLUSTER_AGENTS = 'test/cluster/agents.ts';

export interface TroupeProcess {
  /** The child's pid (also its process group id); tools executed in it record this pid. */
  readonly pid: number;
  /** Everything it printed so far (stdout and stderr interleaved). */
  output(): string;
  /** Resolves with the signal that ended it (or null after a normal exit). */
  readonly exited: Promise<NodeJS.Signals | null>;
  /** Waits until its output matches `pattern`; rejects when it exits first or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends `signal` to its whole process group (a no-op once it has exited). */
  signal(signal: NodeJS.Signals): void;
  /** SIGKILLs its process group and resolves once it has exited. */
  kill(): Promise<void>;
}

const started = new Set<TroupeProcess>();

/** Starts `troupe <args>` in its own process group with `env` added to this process's environment. */
export function spawnTroupe(args: readonly string[], env: Readonly<Record<string, string>> = {}): TroupeProcess {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  if (child.pid === undefined) throw new Error(`could not start troupe ${args.join(' ')}`);
  const pid = child.pid;
  let text = '';
  let alive = true;
  const changed = new Set<() => void>();
  const onOutput = (chunk: Buffer): void => {
    text += chunk.toString('utf8');
    for (const wake of [...changed]) wake();
  };
  child.stdout!.on('data', onOutput);
  child.stderr!.on('data', onOutput);
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => {
      alive = false;
      for (const wake of [...changed]) wake();
      resolve(signal);
    }),
  );
  const handle: TroupeProcess = {
    pid,
    output: () => text,
    exited,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => finish(new Error(`troupe ${args[0]} (pid ${pid}) printed nothing matching ${pattern} in ${timeoutMs} ms:\n${text}`)), timeoutMs);
        const check = (): void => {
          const match = pattern.exec(text);
          if (match) finish(undefined, match);
          else if (!alive) finish(new Error(`troupe ${args[0]} (pid ${pid}) exited before printing ${pattern}:\n${text}`));
        };
        function finish(error?: Error, match?: RegExpMatchArray): void {
          clearTimeout(timer);
          changed.delete(check);
          if (error) reject(error);
          else resolve(match!);
        }
        changed.add(check);
        check();
      });
    },
    signal(signal) {
      if (!alive) return;
      try {
        process.kill(-pid, signal);
      } catch (error) {
        // Gone between the check and the kill.
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    },
    async kill() {
      handle.signal('SIGKILL');
      await exited;
      started.delete(handle);
    },
  };
  started.add(handle);
  return handle;
}

/** SIGKILLs every child started here that is still there. */
export async function killAll(): Promise<void> {
  await Promise.all([...started].map((p) => p.kill()));
}

/** A `troupe serve` child's address once it listens (the shape the HTTP test helpers take). */
export interface ServeAddress {
  readonly url: string;
  readonly token: string;
  readonly process: TroupeProcess;
}

/** Starts `troupe serve --workers external` on `url`/`schema` (any free port) and waits until it listens. */
export async function startServeProcess(url: string, schema: string, token: string): Promise<ServeAddress> {
  const child = spawnTroupe(['serve', '--db', url, '--schema', schema, '--workers', 'external', '--agents', CLUSTER_AGENTS, '--port', '0', '--token', token, '--inspect', 'off']);
  const [, listening] = await child.waitFor(/troupe server listening on (http:\/\/\S+)/);
  return { url: listening!, token, process: child };
}

/** A `troupe worker` child and its lease holder name, once it has started its loop. */
export interface WorkerProcess {
  readonly owner: string;
  readonly process: TroupeProcess;
}

export interface WorkerProcessOptions {
  readonly concurrency: number;
  readonly leaseTtlMs: number;
  readonly pollMs: number;
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts `troupe worker` on `url`/`schema` with the cluster agents and waits for its start line. */
export async function startWorkerProcess(url: string, schema: string, options: WorkerProcessOptions): Promise<WorkerProcess> {
  const args = ['worker', '--db', url, '--schema', schema, '--agents', CLUSTER_AGENTS];
  args.push('--concurrency', String(options.concurrency), '--lease-ttl', String(options.leaseTtlMs), '--poll', String(options.pollMs));
  const child = spawnTroupe(args, options.env);
  const [, owner] = await child.waitFor(/^troupe worker (worker:\S+):/m);
  return { owner: owner!, process: child };
}
