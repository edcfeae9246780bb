import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// Runs against the built package (dist/, built by `npm ci` / `npm run build`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractBlocks, markdownFiles, type Block } from './blocks.js';
import { compileBlocks, type Compiled } from './compile.js';
import { EXPECTED_STDOUT } from './expected.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const noNetwork = fileURLToPath(new URL('./no-network.mjs', import.meta.url));
const blocks = markdownFiles(root).flatMap((file) => extractBlocks(root, file));
const checked = blocks.filter((b) => b.mode !== 'fragment');
const runnable = blocks.filter((b) => b.mode === 'run');
// Inside the package (scratch/ is git-ignored) so `troupe` resolves to this package by name.
const dir = join(root, 'scratch', `readme-blocks-${process.pid}`);

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

let compiled: Compiled;
const outcomes = new Map<string, Outcome>();

/** Runs one compiled block under plain node in its own empty working directory. */
function runBlock(block: Block): Promise<Outcome> {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-readme-'));
  const env = { ...process.env, TROUPE_MODEL: '' };
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['--import', noNetwork, compiled.outputs.get(block.key)!], { cwd, env, timeout: 20_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      rmSync(cwd, { recursive: true, force: true });
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
    // A block that reads the terminal (askHuman) gets one answer.
    child.stdin?.end('Rome\n');
  });
}

beforeAll(async () => {
  compiled = compileBlocks(root, dir, checked);
  // A few at a time: each is a node process loading the package.
  const queue = [...runnable];
  const worker = async () => {
    for (let block = queue.shift(); block; block = queue.shift()) outcomes.set(block.key, await runBlock(block));
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}, 180_000); // a bound for a loaded machine: it compiles and runs every block of README and docs

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('README and docs examples', () => {
  // The exemptions are listed here so that adding one is a visible decision.
  it('runs every block except the marked ones: typechecked only, or fragments', () => {
    const keys = (mode: Block['mode']) => blocks.filter((b) => b.mode === mode).map((b) => b.key);
    expect(keys('no-run')).toEqual([
      "docs/inspector.md › Using Stately's inspector",
      "docs/inspector.md › Using Stately's inspector #2",
      'docs/mcp.md › MCP servers',
      'docs/mcp.md › Servers with many tools (`defer`)',
      'docs/plugins.md › MCP servers as plugins',
      'docs/scaling-out.md › The store in code',
      'docs/scaling-out.md › Workers',
      'docs/scaling-out.md › Retention of stored events',
      'docs/scaling-out.md › The same in code',
      'docs/testing-agents.md › One test per path in vitest',
    ]);
    expect(keys('fragment')).toEqual([
      'docs/agents-and-runs.md › Agents and runs',
      'docs/agents-and-runs.md › Budgets, turns and cancellation',
      'docs/approvals-and-waits.md › Approval ids',
      'docs/plugins.md › Run event subscribers',
      'docs/server.md › AI SDK UI streams (`useChat`)',
    ]);
    expect(runnable).toHaveLength(35);
    expect(new Set(blocks.map((b) => b.key)).size).toBe(blocks.length);
  });

  it('typechecks every block that is not a fragment against the built package', () => {
    expect(compiled.errors).toEqual([]);
  });

  it('has an expected output for exactly the blocks that run', () => {
    expect(Object.keys(EXPECTED_STDOUT).sort()).toEqual(runnable.map((b) => b.key).sort());
  });

  it.each(runnable.map((b) => [b.key, b] as const))('runs %s', (_key, block) => {
    const outcome = outcomes.get(block.key)!;
    expect({ code: outcome.code, stderr: outcome.stderr }).toEqual({ code: 0, stderr: '' });
    const expected = EXPECTED_STDOUT[block.key];
    if (expected instanceof RegExp) expect(outcome.stdout).toMatch(expected);
    else expect(outcome.stdout).toBe(expected);
  });
});
