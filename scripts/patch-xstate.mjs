/**
 * Applies troupe's performance patches to xstate 5.33.3 in node_modules (run by the
 * `prepare` script, so `npm install` / `npm ci` in this repository apply it; a project that
 * installs troupe as a dependency never runs it and keeps an unpatched xstate, which behaves
 * the same, only slower).
 *
 * The patch: XState's `Actor` constructor merges its options with
 * `{ ...defaultOptions, ...options }`. On Node 20's V8 that object-spread pair takes a slow
 * path costing about 0.45 µs per key (2.6 µs for the 6 keys a spawned child gets, against
 * 0.09 µs for `Object.assign({}, defaultOptions, options)`), and troupe creates an actor per
 * tool call. The replacement builds the same plain object: `options` is a plain options
 * object (or undefined, which both forms ignore), and `defaultOptions` has no accessors.
 * The spread also kept each child actor's options (its input, its parent) alive past
 * young-generation GCs on Node 20, about 1.6 KB per invoked child; Object.assign does not
 * (test/xstate-actor-patches.test.ts, with test/fixtures/actor-retention.mjs).
 *
 * Refuses (exit 1) on any other xstate version or when a file does not hold the exact text
 * it replaces: a new xstate must be looked at again, never patched blindly. Idempotent.
 * test/xstate-patch.test.ts pins the version, the files and the patched behaviour.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { patchXstateSteps } from './patch-xstate-steps.mjs';

export const XSTATE_VERSION = '5.33.3';
/** The builds that define the Actor class (production and development, CommonJS and ESM). */
export const PATCHED_FILES = ['raise-9de11213.cjs.js', 'raise-effbee0c.esm.js', 'raise-3e76cf12.development.cjs.js', 'raise-991ac3b2.development.esm.js'];
export const ORIGINAL = `    const resolvedOptions = {
      ...defaultOptions,
      ...options
    };
`;
export const PATCHED = `    // troupe: Object.assign instead of an object spread (a slow V8 path on Node 20, scripts/patch-xstate.mjs)
    const resolvedOptions = Object.assign({}, defaultOptions, options);
`;

/** Patches the xstate package in `xstateDir`; returns what happened per file. @throws Error on a version or text mismatch */
export function patchXstate(xstateDir) {
  const { version } = JSON.parse(readFileSync(join(xstateDir, 'package.json'), 'utf8'));
  if (version !== XSTATE_VERSION) throw new Error(`patch-xstate: xstate ${version} found, the patch is for ${XSTATE_VERSION} only; review scripts/patch-xstate.mjs`);
  return PATCHED_FILES.map((name) => {
    const file = join(xstateDir, 'dist', name);
    const text = readFileSync(file, 'utf8');
    if (text.includes(PATCHED)) return `${name}: already patched`;
    const at = text.indexOf(ORIGINAL);
    if (at < 0 || text.indexOf(ORIGINAL, at + 1) >= 0) throw new Error(`patch-xstate: ${name} does not hold the expected Actor options code exactly once`);
    writeFileSync(file, text.slice(0, at) + PATCHED + text.slice(at + ORIGINAL.length));
    return `${name}: patched`;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const xstateDir = dirname(createRequire(join(root, 'package.json')).resolve('xstate/package.json'));
  try {
    for (const line of patchXstate(xstateDir)) console.log(`patch-xstate: ${line}`);
    // The step algorithm's patches (scripts/patch-xstate-steps.mjs), on the same install.
    for (const line of patchXstateSteps(xstateDir)) console.log(`patch-xstate: ${line}`);
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
