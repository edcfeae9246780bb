import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
// dist/ is built by `npm install` / `npm ci` (the prepare script).
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, string | { types: string; import: string }>; files: string[] };

describe('package entry', () => {
  it('declares the entry points of the design, each with built types and code inside "files"', () => {
    expect(Object.keys(pkg.exports)).toEqual(['.', './sqlite', './postgres', './server', './mcp', './ai-sdk', './otel', './testing', './package.json']);
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (subpath === './package.json') continue;
      const { types, import: code } = target as { types: string; import: string };
      expect(types).toBe(code.replace(/\.js$/, '.d.ts'));
      expect([existsSync(types), existsSync(code)]).toEqual([true, true]);
      expect(pkg.files.some((dir) => code.startsWith(`./${dir}/`))).toBe(true);
    }
  });

  it('imports every entry point through the package name under plain node', () => {
    const names = Object.keys(pkg.exports).filter((s) => s !== './package.json').map((s) => `troupe${s.slice(1)}`);
    const script = `for (const name of ${JSON.stringify(names)}) { const m = await import(name); console.log(name, Object.keys(m).length > 0); }`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out.trim().split('\n')).toEqual(names.map((name) => `${name} true`));
  });

  it('runs the demo under plain node (XState production build) to run_completed', () => {
    const out = execFileSync(process.execPath, ['dist/cli/main.js', 'demo'], { encoding: 'utf8' });
    expect(out).toContain('⇄ handoff Triage → Travel specialist');
    // The sub-run of call 0 in the specialist's turn 2 (sub-run ids are <parent>/<turn>.<index>).
    expect(out).toMatch(/▶ run run_[\w-]+\/2\.0 started \(agent Research\)/);
    expect(out).toContain('✗ call_flights attempt 1 failed: flight search timed out upstream (retrying)');
    expect(out).toContain('? approval required for book_hotel({"city":"Rome","nights":"2"}) — approving');
    expect(out).toMatch(/■ run run_[\w-]+ completed after 4 turns/);
    expect(out).toContain('output: Rome is 24 °C and clear');
  });
});
