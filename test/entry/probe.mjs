// Imports one specifier under plain node and prints, as JSON, what that loaded:
//   node test/entry/probe.mjs <specifier> [--open-sqlite]
// `files`: this package's files (dist/...), `packages`: dependencies by package name (ESM
// loads seen by the hook, CommonJS requires from require.cache, which the hook does not
// see on Node 20), `addons`: native .node objects in the process (process.report).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const [specifier, mode] = process.argv.slice(2);
const root = fileURLToPath(new URL('../../', import.meta.url));
const logFile = join(tmpdir(), `troupe-probe-${process.pid}.log`);
writeFileSync(logFile, '');
register(new URL('./load-hooks.mjs', import.meta.url), { data: { logFile } });

const entry = await import(specifier);
if (mode === '--open-sqlite') {
  // Positive control: opening a database must make the addon visible to this probe.
  const store = new entry.SqliteCheckpointStore(':memory:');
  store.list();
  store.close();
}

const paths = new Set(readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map((url) => fileURLToPath(url)));
rmSync(logFile);
for (const path of Object.keys(createRequire(import.meta.url).cache)) paths.add(path);

const files = new Set();
const packages = new Set();
for (const path of paths) {
  const rel = relative(root, path).split(sep).join('/');
  const nested = rel.split('node_modules/');
  if (nested.length > 1) {
    const tail = nested.at(-1).split('/');
    packages.add(tail[0].startsWith('@') ? `${tail[0]}/${tail[1]}` : tail[0]);
  } else if (rel.startsWith('dist/')) files.add(rel.slice('dist/'.length));
  else if (!rel.startsWith('test/entry/')) files.add(rel);
}
const addons = process.report.getReport().sharedObjects.filter((so) => so.endsWith('.node')).map((so) => so.split('/').at(-1));
const sorted = (set) => [...set].sort();
console.log(JSON.stringify({ exports: Object.keys(entry).sort(), files: sorted(files), packages: sorted(packages), addons: addons.sort() }));
