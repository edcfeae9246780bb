import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, createMachine, fromPromise } from 'xstate';
import { ORIGINAL, PATCHED, PATCHED_FILES, XSTATE_VERSION, patchXstate } from '../scripts/patch-xstate.mjs';

const xstateDir = dirname(createRequire(import.meta.url).resolve('xstate/package.json'));
const read = (dir: string, name: string): string => readFileSync(join(dir, 'dist', name), 'utf8');

describe('the xstate patch (scripts/patch-xstate.mjs, run by `prepare`)', () => {
  it('is pinned to the xstate version package.json pins, and that is the installed one', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string>; scripts: Record<string, string> };
    expect(pkg.dependencies.xstate).toBe(XSTATE_VERSION);
    expect(JSON.parse(readFileSync(join(xstateDir, 'package.json'), 'utf8')).version).toBe(XSTATE_VERSION);
    expect(pkg.scripts.prepare).toBe('node scripts/patch-xstate.mjs && npm run build');
  });

  it('is applied to every build of the Actor class in node_modules', () => {
    for (const name of PATCHED_FILES) {
      const text = read(xstateDir, name);
      expect([name, text.includes(PATCHED), text.includes(ORIGINAL)]).toEqual([name, true, false]);
    }
  });

  it('keeps the resolved actor options: defaults, then the given options', () => {
    const logic = fromPromise(async () => 1);
    const plain = createActor(logic) as unknown as { options: Record<string, unknown>; id: string };
    expect(Object.keys(plain.options).sort()).toEqual(['clock', 'devTools', 'logger']);
    expect(plain.options.devTools).toBe(false);
    const logger = (): void => undefined;
    const given = createActor(logic, { id: 'given', input: { n: 1 }, logger }) as unknown as { options: Record<string, unknown>; id: string; logger: unknown };
    expect(Object.keys(given.options).sort()).toEqual(['clock', 'devTools', 'id', 'input', 'logger']);
    expect([given.id, given.options.input, given.logger]).toEqual(['given', { n: 1 }, logger]);
    // A spawned child gets its id, parent and input through the same merge.
    const parent = createActor(createMachine({ invoke: { id: 'kid', src: fromPromise(async ({ input }: { input: number }) => input * 2), input: 21 } })).start();
    const kid = parent.getSnapshot().children.kid as unknown as { id: string; _parent: unknown; options: { input: unknown } };
    expect([kid.id, kid._parent === parent, kid.options.input]).toEqual(['kid', true, 21]);
    parent.stop();
  });

  describe('patchXstate on a copy', () => {
    let dir: string | undefined;
    afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

    /** A copy of the installed package's patched files with the original text put back. */
    function unpatchedCopy(version = XSTATE_VERSION): string {
      dir = mkdtempSync(join(tmpdir(), 'troupe-xstate-patch-'));
      mkdirSync(join(dir, 'dist'));
      for (const name of PATCHED_FILES) writeFileSync(join(dir, 'dist', name), read(xstateDir, name).replace(PATCHED, ORIGINAL));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'xstate', version }));
      return dir;
    }

    it('replaces the spread once per file, and a second run changes nothing', () => {
      const copy = unpatchedCopy();
      expect(patchXstate(copy)).toEqual(PATCHED_FILES.map((n) => `${n}: patched`));
      const once = PATCHED_FILES.map((n) => read(copy, n));
      expect(once.map((t) => [t.split(PATCHED).length, t.includes(ORIGINAL)])).toEqual(PATCHED_FILES.map(() => [2, false]));
      expect(patchXstate(copy)).toEqual(PATCHED_FILES.map((n) => `${n}: already patched`));
      expect(PATCHED_FILES.map((n) => read(copy, n))).toEqual(once);
    });

    it('refuses another xstate version and writes nothing', () => {
      const copy = unpatchedCopy('5.34.0');
      const before = PATCHED_FILES.map((n) => read(copy, n));
      expect(() => patchXstate(copy)).toThrow(`patch-xstate: xstate 5.34.0 found, the patch is for ${XSTATE_VERSION} only; review scripts/patch-xstate.mjs`);
      expect(PATCHED_FILES.map((n) => read(copy, n))).toEqual(before);
    });

    it('refuses a file that does not hold the expected code', () => {
      const copy = unpatchedCopy();
      writeFileSync(join(copy, 'dist', PATCHED_FILES[1]!), 'changed');
      expect(() => patchXstate(copy)).toThrow(`patch-xstate: ${PATCHED_FILES[1]} does not hold the expected Actor options code exactly once`);
    });
  });
});
