/**
 * An example of examples/ as an application has it: the folder copied to a temporary
 * directory, with a node_modules/ holding exactly the packages its package.json names. troupe
 * is this repository (its built dist/, through package.json "exports", as an install has it);
 * every other dependency is a link to this repository's copy of that package, so an import the
 * example's package.json does not declare fails. No vitest in here.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ExampleManifest {
  readonly name: string;
  readonly private: boolean;
  readonly type: string;
  readonly scripts: Record<string, string>;
  readonly dependencies: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
}

export interface ExampleProject {
  /** The copy's folder. */
  readonly dir: string;
  readonly manifest: ExampleManifest;
  /** `tsc -p tsconfig.json` in the copy: its output ('' when the sources typecheck). */
  typecheck(): Promise<string>;
  /** `npm run <script> --silent` in the copy; resolves with stdout (rejects with stderr on a non-zero exit). */
  run(script: string, env?: Readonly<Record<string, string>>): Promise<string>;
  /** Starts `npm run <script> --silent` in its own process group (kill the group to stop everything it started). */
  spawn(script: string, env?: Readonly<Record<string, string>>): ChildProcess;
  remove(): void;
}

/** The output the example's README.md shows: the fenced block after the line "It prints:". */
export function readmeOutput(name: string): string {
  const readme = readFileSync(join(REPO_ROOT, 'examples', name, 'README.md'), 'utf8');
  const block = /It prints:\n\n```\n([\s\S]*?)```/.exec(readme);
  if (!block) throw new Error(`examples/${name}/README.md has no "It prints:" block`);
  return block[1]!;
}

/** Copies examples/<name> (without node_modules/ and build output) and links its dependencies. */
export function exampleProject(name: string): ExampleProject {
  const source = join(REPO_ROOT, 'examples', name);
  const dir = join(mkdtempSync(join(tmpdir(), 'troupe-example-')), name);
  cpSync(source, dir, { recursive: true, filter: (path) => !/[/\\](node_modules|dist|\.data)$/.test(path) });
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as ExampleManifest;
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, '.bin'), { recursive: true });
  for (const dependency of [...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies ?? {})]) {
    const target = dependency === 'troupe' ? REPO_ROOT : join(REPO_ROOT, 'node_modules', dependency);
    if (!existsSync(target)) throw new Error(`examples/${name} depends on '${dependency}', which this repository does not install (add it to troupe's devDependencies).`);
    mkdirSync(dirname(join(modules, dependency)), { recursive: true });
    symlinkSync(target, join(modules, dependency), 'dir');
    linkBins(modules, dependency, target);
  }
  const env = (extra: Readonly<Record<string, string>> = {}) => ({ ...process.env, npm_config_update_notifier: 'false', OPENAI_API_KEY: '', ...extra });
  return {
    dir,
    manifest,
    async typecheck() {
      try {
        const { stdout } = await promisify(execFile)(process.execPath, [join(modules, 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8' });
        return stdout;
      } catch (error) {
        return (error as { stdout: string }).stdout || String(error);
      }
    },
    async run(script, extra) {
      try {
        const { stdout } = await promisify(execFile)('npm', ['run', script, '--silent'], { cwd: dir, encoding: 'utf8', env: env(extra), timeout: 60_000 });
        return stdout;
      } catch (error) {
        const { stdout, stderr } = error as { stdout?: string; stderr?: string };
        throw new Error(`npm run ${script} in examples/${name} failed: ${String(error)}\n${stdout ?? ''}\n${stderr ?? ''}`);
      }
    },
    spawn(script, extra) {
      return spawn('npm', ['run', script, '--silent'], { cwd: dir, env: env(extra), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    },
    remove() {
      rmSync(dirname(dir), { recursive: true, force: true });
    },
  };
}

/**
 * node_modules/.bin entries for a linked package's `bin` (what npm makes on install), so `npm run` finds tsx, tsc, vite and
 * troupe; they run under this process's node (the Node version the tests run on).
 */
function linkBins(modules: string, dependency: string, target: string): void {
  const { bin } = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
  const bins = typeof bin === 'string' ? { [dependency.split('/').pop()!]: bin } : (bin ?? {});
  for (const [command, file] of Object.entries(bins)) {
    // A shell shim (as npm makes where it cannot link): the repository's built files are not executable.
    const shim = join(modules, '.bin', command);
    if (!existsSync(shim)) writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${join(target, file)}" "$@"\n`, { mode: 0o755 });
  }
}
