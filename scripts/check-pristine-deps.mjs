#!/usr/bin/env node
/**
 * What ships is what is tested: fails when an installed dependency differs from the package
 * the registry publishes. For each runtime dependency (package.json `dependencies` and the
 * `peerDependencies` an application installs beside troupe) and xstate,
 * it packs the installed version from the registry (`npm pack`) into a temporary folder and
 * compares every file with node_modules/<name>, both ways (a native addon's build/ output
 * aside). Run by .ci/run after `npm ci`.
 *   node scripts/check-pristine-deps.mjs [name ...]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const names = process.argv.length > 2 ? process.argv.slice(2) : [...new Set(['xstate', ...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})])];

/** Every file under `dir`, as paths relative to it. */
function files(dir, base = dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path, base) : [relative(base, path)];
  });
}

const work = mkdtempSync(join(tmpdir(), 'troupe-pristine-'));
const problems = [];
try {
  for (const name of names) {
    const installed = join(root, 'node_modules', name);
    const { version } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    const dest = mkdtempSync(join(work, 'pkg-'));
    const tarball = execFileSync('npm', ['pack', `${name}@${version}`, '--silent', '--pack-destination', dest], { encoding: 'utf8' }).trim().split('\n').pop();
    execFileSync('tar', ['xzf', join(dest, tarball), '-C', dest]);
    const published = join(dest, 'package');
    const want = new Set(files(published));
    // A native addon's own build output (node-gyp writes build/) is not a change to the package.
    const have = new Set(files(installed).filter((file) => !file.startsWith('node_modules/') && !(file.startsWith('build/') && !want.has(file))));
    const differ = [...want].filter((file) => !have.has(file) || !readFileSync(join(published, file)).equals(readFileSync(join(installed, file))));
    const extra = [...have].filter((file) => !want.has(file));
    if (differ.length + extra.length === 0) console.log(`pristine: ${name}@${version} (${want.size} files)`);
    else problems.push(`${name}@${version}: ${[...differ.map((f) => `changed ${f}`), ...extra.map((f) => `added ${f}`)].join(', ')}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (problems.length > 0) {
  console.error(`Installed dependencies differ from the published packages:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
