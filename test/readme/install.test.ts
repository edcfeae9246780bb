import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// Packs the built package (dist/, built by `npm ci` / `npm run build`).
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'troupe-install-'));
// Removing the copied dependencies can take longer than the default hook timeout on a busy machine.
afterAll(() => rmSync(work, { recursive: true, force: true }), 60_000);

/** The ```js block of the README's "Use it in your project" section (the user's agent.mjs). */
function readmeAgentScript(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('Use it in your project'))!;
  return /```js\n([\s\S]*?)```/.exec(section)![1]!;
}

/**
 * Copies troupe's production dependencies (per package-lock.json) into the new project, so
 * that npm finds every dependency of the tarball already installed and needs no registry.
 * Copies, not links: npm owns the new project's node_modules and may delete or rewrite in it.
 */
function seedDependencies(app: string): void {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev || path.lastIndexOf('node_modules/') !== 0) continue;
    try {
      cpSync(join(root, path), join(app, path), { recursive: true, verbatimSymlinks: true });
    } catch (error) {
      // Optional packages for other platforms are in the lockfile but not on disk.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

describe('installing the packed tarball into an empty project', () => {
  it('npm pack, npm install <tarball>, then the README agent.mjs runs to completion', () => {
    // --ignore-scripts: pack the dist/ that is already built instead of rebuilding it under
    // the other test files that read it.
    const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', work], { cwd: root, encoding: 'utf8' }).trim();
    expect(packed).toBe('troupe-0.1.0.tgz');

    const app = join(work, 'my-agent');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'my-agent', version: '1.0.0', private: true, type: 'module' }));
    seedDependencies(app);
    execFileSync('npm', ['install', `../${packed}`, '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: app, encoding: 'utf8', stdio: 'pipe' });

    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(manifest.dependencies).toEqual({ troupe: `file:../${packed}` });
    // Only what "files" lists (plus what npm always adds): no src/, no test/.
    expect(readdirSync(join(app, 'node_modules', 'troupe')).sort()).toEqual(['README.md', 'dist', 'package.json']);

    writeFileSync(join(app, 'agent.mjs'), readmeAgentScript());
    const out = execFileSync(process.execPath, ['agent.mjs'], { cwd: app, encoding: 'utf8' });
    expect(out).toBe('Hello from troupe!\n');
  }, 60_000);
});
