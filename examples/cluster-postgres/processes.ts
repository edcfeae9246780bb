// The cluster's processes (`troupe serve`, `troupe worker`, `troupe db migrate`), started as
// an operator would start them, each in its own process group so one kill stops all of it.
import { spawn } from 'node:child_process';

export interface TroupeProcess {
  /** Resolves with the first match of `pattern` in its output; rejects if it exits first. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Resolves with its exit code, or the signal that ended it. */
  readonly exited: Promise<number | string>;
  kill(signal: NodeJS.Signals): void;
  output(): string;
}

export function troupe(args: readonly string[], env: Readonly<Record<string, string>> = {}): TroupeProcess {
  const child = spawn('node_modules/.bin/troupe', args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let text = '';
  const watchers = new Set<() => void>();
  const take = (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const watcher of [...watchers]) watcher();
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code ?? 0)));
  let alive = true;
  void exited.then(() => {
    alive = false;
    for (const watcher of [...watchers]) watcher();
  });
  return {
    exited,
    output: () => text,
    kill: (signal) => alive && process.kill(-child.pid!, signal),
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(text);
          if (match || !alive) watchers.delete(check);
          if (match) resolve(match);
          else if (!alive) reject(new Error(`troupe ${args[0]} exited before printing ${pattern}:\n${text}`));
        };
        watchers.add(check);
        check();
      }),
  };
}
