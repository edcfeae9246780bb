import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
// Packs the built package (dist/, built by `npm ci` / `npm run build`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPECTED_STDOUT } from './expected.js';
import { startLoopbackRegistry, type LoopbackRegistry } from './loopback-registry.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'troupe-install-'));
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
/** The version troupe's own lock has of a package (the registry serves exactly those). */
const locked = (name: string): string => lock.packages[`node_modules/${name}`]!.version!;

let registry: LoopbackRegistry;
let tarball: string;

beforeAll(async () => {
  registry = await startLoopbackRegistry(join(root, 'package-lock.json'));
  // --ignore-scripts: pack the dist/ that is already built instead of rebuilding it under
  // the other test files that read it.
  const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', work], { cwd: root, encoding: 'utf8' }).trim();
  expect(packed).toBe('troupe-0.1.0.tgz');
  tarball = join(work, packed);
}, 60_000);
afterAll(async () => {
  await registry?.close();
  rmSync(work, { recursive: true, force: true });
}, 60_000);

/** A new empty project (`npm init` and `type: module`, as the README says). */
function emptyProject(name: string): string {
  const app = join(work, name);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }));
  return app;
}

/**
 * `npm install <specs>` in `app` from the loopback registry, with a cache of its own (so
 * every package really comes through the registry). Returns npm's output. Asynchronous: the
 * registry answers from this process.
 */
async function npmInstall(app: string, specs: string[], extra: string[] = []): Promise<string> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      'npm',
      ['install', ...specs, '--registry', registry.url, '--cache', join(work, 'npm-cache'), '--no-audit', '--no-fund', '--foreground-scripts', '--loglevel', 'info', ...extra],
      { cwd: app, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' }, maxBuffer: 64 * 1024 * 1024 },
    );
    return `${stdout}\n${stderr}`;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm install ${specs.join(' ')} failed; registry misses: ${registry.misses.join(', ') || 'none'}\n${stdout ?? ''}\n${stderr ?? ''}`);
  }
}

/** The ```js block of the README's "Use it in your project" section (the user's agent.mjs). */
function readmeSection(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  return readme.split(/^## /m).find((s) => s.startsWith('Use it in your project'))!;
}

/** The ```ts block of the README's "A first agent" section (plain JavaScript too, as the README says). */
function readmeFirstAgent(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('A first agent\n'))!;
  return /```ts\n([\s\S]*?)```/.exec(section)![1]!;
}

/** Files and folders the README links to by relative path (docs, images). */
function readmeLinkedFiles(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const targets = [...readme.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/i.test(target));
  return [...new Set(targets)].sort();
}

describe('installing the packed tarball into an empty project (npm, loopback registry)', () => {
  it('the tarball holds dist, docs, examples, LICENSE (MIT), README and every file the README links to, and nothing else', () => {
    const files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).trim().split('\n').map((f) => f.replace(/^package\//, ''));
    const top = [...new Set(files.map((f) => f.split('/')[0]!))].sort();
    expect(top).toEqual(['LICENSE', 'README.md', 'dist', 'docs', 'examples', 'package.json']);
    // The examples' sources, without anything a run of them leaves behind (their .gitignore).
    expect(files.filter((f) => f.startsWith('examples/') && /(node_modules|\.data|\/dist)\//.test(f))).toEqual([]);
    const linked = readmeLinkedFiles();
    expect(linked).toContain('docs/models.md');
    // Guides other branches are writing are linked before they land (links.test.ts tolerates exactly these while absent).
    for (const file of linked) if (existsSync(join(root, file))) expect(files, `README links ${file}`).toContain(file);
    const manifest = JSON.parse(execFileSync('tar', ['xzOf', tarball, 'package/package.json'], { encoding: 'utf8' })) as Record<string, unknown>;
    expect(manifest.license).toBe('MIT');
    expect(execFileSync('tar', ['xzOf', tarball, 'package/LICENSE'], { encoding: 'utf8' })).toMatch(/^MIT License\n/);
    expect(manifest.repository).toMatchObject({ type: 'git' });
  });

  it('core only (troupe + zod): installs pure JavaScript (no install script runs), and the README agent.mjs runs', async () => {
    const app = emptyProject('core-app');
    const output = await npmInstall(app, [tarball, `zod@${locked('zod')}`]);
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['troupe', 'zod']);
    // Exactly troupe, its three runtime dependencies (nanoid, xstate, @cfworker/json-schema for plain JSON
    // Schema parameters; all pure JavaScript) and its peer zod: no optional peer came along.
    expect(readdirSync(join(app, 'node_modules')).filter((name) => !name.startsWith('.')).sort()).toEqual(['@cfworker', 'nanoid', 'troupe', 'xstate', 'zod']);
    expect(readdirSync(join(app, 'node_modules', '@cfworker'))).toEqual(['json-schema']);
    // No native build: no package has an install script (npm prints each one it runs).
    expect(output).not.toMatch(/node-gyp|prebuild-install|\binstall: |\bpostinstall: /);
    expect(existsSync(join(app, 'node_modules', 'better-sqlite3'))).toBe(false);
    expect(readdirSync(join(app, 'node_modules', 'troupe')).sort()).toEqual(['LICENSE', 'README.md', 'dist', 'docs', 'examples', 'package.json']);

    writeFileSync(join(app, 'agent.mjs'), /```js\n([\s\S]*?)```/.exec(readmeSection())![1]!);
    expect(execFileSync(process.execPath, ['agent.mjs'], { cwd: app, encoding: 'utf8' })).toBe('Hello from troupe!\n');
    // The README's first agent (a tool and an approval) runs as it is, saved as first.mjs, with only troupe and zod installed.
    writeFileSync(join(app, 'first.mjs'), readmeFirstAgent());
    expect(execFileSync(process.execPath, ['first.mjs'], { cwd: app, encoding: 'utf8' })).toBe(EXPECTED_STDOUT['README.md › A first agent']);

    // Each entry whose optional peer is missing says what to install.
    /** Runs ES module code in the app: 'ok', or the UserError's message (else all of stderr). */
    const run = (code: string) => {
      try {
        execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: app, encoding: 'utf8', stdio: 'pipe' });
        return 'ok';
      } catch (error) {
        return /UserError: (.*)/.exec((error as { stderr: string }).stderr)?.[1] ?? (error as { stderr: string }).stderr;
      }
    };
    const importing = (entry: string) => run(`await import('${entry}')`);
    expect(importing('troupe/sqlite')).toBe("troupe/sqlite needs the package 'better-sqlite3', which is not installed. Install it next to troupe: npm install better-sqlite3");
    expect(importing('troupe/postgres')).toBe("troupe/postgres needs the package 'pg', which is not installed. Install it next to troupe: npm install pg");
    expect(importing('troupe/mcp')).toBe("troupe/mcp needs the package '@modelcontextprotocol/sdk', which is not installed. Install it next to troupe: npm install @modelcontextprotocol/sdk");
    expect(importing('troupe/otel')).toBe("troupe/otel needs the package '@opentelemetry/api', which is not installed. Install it next to troupe: npm install @opentelemetry/api");
    // These need no optional peer; modelFromEnv needs its provider package when TROUPE_MODEL asks for it.
    expect(importing('troupe/ai-sdk')).toBe('ok');
    const fromEnv = "const { modelFromEnv } = await import('troupe/ai-sdk'); modelFromEnv({ TROUPE_MODEL: 'openai-compatible:m', TROUPE_BASE_URL: 'http://127.0.0.1:9/v1' })";
    expect(run(fromEnv)).toBe(
      "TROUPE_MODEL=openai-compatible:… needs the package '@ai-sdk/openai-compatible', which is not installed. Install it next to troupe: npm install @ai-sdk/openai-compatible",
    );
    expect(importing('troupe/server')).toBe('ok');
    expect(importing('troupe/testing')).toBe('ok');
  }, 120_000);

  it('every entry with its peers: `tsc --noEmit` with skipLibCheck: false passes on a file importing them all', async () => {
    const app = emptyProject('typed-app');
    const peers = ['zod', 'better-sqlite3', 'pg', '@modelcontextprotocol/sdk', '@opentelemetry/api', '@types/better-sqlite3', '@types/pg', '@types/node', 'typescript'];
    // --ignore-scripts: only the types matter here (better-sqlite3 would compile its addon).
    await npmInstall(app, [tarball, ...peers.map((name) => `${name}@${locked(name)}`)], ['--ignore-scripts']);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] }, files: ['app.ts'] }),
    );
    writeFileSync(
      join(app, 'app.ts'),
      [
        "import * as core from 'troupe';",
        "import * as testing from 'troupe/testing';",
        "import * as sqlite from 'troupe/sqlite';",
        "import * as postgres from 'troupe/postgres';",
        "import * as server from 'troupe/server';",
        "import * as mcp from 'troupe/mcp';",
        "import * as aiSdk from 'troupe/ai-sdk';",
        "import * as otel from 'troupe/otel';",
        '',
        'export const all = [core, testing, sqlite, postgres, server, mcp, aiSdk, otel];',
        '',
      ].join('\n'),
    );
    const tsc = (project: string): string => {
      try {
        return execFileSync(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { cwd: app, encoding: 'utf8', stdio: 'pipe' });
      } catch (error) {
        return (error as { stdout: string }).stdout;
      }
    };
    expect(tsc('tsconfig.json')).toBe('');
    // TypeScript 6 and 7 load no @types package unless `types` lists it: the root and testing
    // entries (no Node module in their API) must compile without @types/node in the program.
    writeFileSync(
      join(app, 'tsconfig.no-node.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', lib: ['ES2022', 'DOM'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, types: [] }, files: ['core.ts'] }),
    );
    writeFileSync(join(app, 'core.ts'), "import * as core from 'troupe';\nimport * as testing from 'troupe/testing';\n\nexport const all = [core, testing];\n");
    expect(tsc('tsconfig.no-node.json')).toBe('');
  }, 180_000);
});
