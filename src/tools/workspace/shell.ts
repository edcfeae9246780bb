import { spawn } from 'node:child_process';

/**
 * Public types avoid Node's global `NodeJS` namespace: TypeScript 6+ no longer loads
 * @types/node unless a project lists it in `types`, and a declaration file that names
 * `NodeJS.*` then fails to compile in the user's project.
 */
export interface ShellOutcome {
  readonly exitCode: number | null;
  /** The signal that ended the command (e.g. 'SIGKILL'), if one did. */
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when an output stream passed maxOutputBytes and the rest was dropped. */
  readonly clipped: boolean;
}

export interface ShellRunOptions {
  readonly cwd: string;
  readonly shell: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly maxOutputBytes: number;
  readonly signal: AbortSignal;
}

/**
 * Runs `command` with `<shell> -c` in its own process group, so an abort (cancel or
 * timeout) kills the command and everything it started. Rejects with the abort reason.
 */
export function runShell(command: string, options: ShellRunOptions): Promise<ShellOutcome> {
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) return reject(options.signal.reason);
    const child = spawn(options.shell, ['-c', command], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = collector(options.maxOutputBytes);
    const err = collector(options.maxOutputBytes);
    child.stdout.on('data', out.add);
    child.stderr.on('data', err.add);
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const onAbort = (): void => {
      kill();
      reject(options.signal.reason);
    };
    options.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      options.signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      options.signal.removeEventListener('abort', onAbort);
      resolve({ exitCode, signal, stdout: out.text(), stderr: err.text(), clipped: out.clipped() || err.clipped() });
    });
  });
}

function collector(max: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  let dropped = false;
  return {
    add: (chunk: Buffer): void => {
      if (size >= max) {
        dropped = true;
        return;
      }
      const room = max - size;
      if (chunk.length > room) dropped = true;
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(kept);
      size += kept.length;
    },
    text: (): string => Buffer.concat(chunks).toString('utf8'),
    clipped: (): boolean => dropped,
  };
}

/** What the model sees: the exit status, then stdout and stderr when not empty. */
export function formatShellOutcome(outcome: ShellOutcome, maxOutputBytes: number): string {
  const status = outcome.signal ? `killed by ${outcome.signal}` : `exit code ${outcome.exitCode}`;
  const parts = [status];
  if (outcome.stdout !== '') parts.push(`stdout:\n${outcome.stdout.replace(/\n$/, '')}`);
  if (outcome.stderr !== '') parts.push(`stderr:\n${outcome.stderr.replace(/\n$/, '')}`);
  if (outcome.clipped) parts.push(`[output over ${maxOutputBytes.toLocaleString('en-US')} bytes per stream was dropped]`);
  return parts.join('\n');
}
