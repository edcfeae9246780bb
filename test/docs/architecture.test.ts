/**
 * docs/architecture.md is the architecture a reader of the repository gets, and the code and
 * tests cite it: this test keeps it from drifting silently.
 *   - "States and transitions" must be the chart: one section per state node in the chart's
 *     order, with its entry/exit actions, its invokes and every transition (event, guard,
 *     target, actions) in the order XState tries them (chart-rows.ts reads `runMachine.root`).
 *   - Every guard of `runGuards`, every action of `runActions` and every state is named.
 *   - A name in backticks that the text calls a guard, an action or a state is one; any other
 *     identifier in backticks still exists somewhere in src/ or test/.
 *   - The overview diagram names only states of the chart; links reach a heading or a file.
 *   - Every citation `docs/architecture.md, "<section>"` in src/ and test/ names a heading.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runMachine } from '../../src/machines/run.machine.js';
import { RUN_STATE } from '../../src/machines/run-states.js';
import { runActions } from '../../src/machines/run.actions.js';
import { runGuards } from '../../src/machines/run.guards.js';
import { chartRows, markdownTable, type StateRows } from './chart-rows.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const docPath = join(root, 'docs/architecture.md');
const doc = readFileSync(docPath, 'utf8');
const lines = doc.split('\n');

const chart = chartRows(runMachine as never);
const guards = new Set(Object.keys(runGuards));
const actions = new Set(Object.keys(runActions));
const stateIds = new Set(chart.map((s) => s.id));
/** A state by its id (`run.turn.turnEnd`) or its key (`turnEnd`, as RUN_STATE names it). */
const states = new Set<string>([...stateIds, ...Object.keys(RUN_STATE), ...chart.map((s) => s.id.split('.').pop()!)]);

function filesUnder(dir: string, ext: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, ext));
    else if (name.endsWith(ext)) out.push(path);
  }
  return out;
}

/** The source and test files the doc may name and that cite it (not this test's own directory). */
const codeFiles = [...filesUnder(join(root, 'src'), '.ts'), ...filesUnder(join(root, 'test'), '.ts').filter((f) => !f.startsWith(join(root, 'test/docs')))];
const codeWords = new Set(codeFiles.flatMap((f) => readFileSync(f, 'utf8').match(/[A-Za-z_$][\w$]*/g) ?? []));

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(): Array<{ line: string; n: number }> {
  const out: Array<{ line: string; n: number }> = [];
  let fenced = false;
  lines.forEach((line, i) => {
    if (/^```/.test(line)) fenced = !fenced;
    else if (!fenced) out.push({ line, n: i + 1 });
  });
  return out;
}

/** GitHub's anchor for a heading. */
const slug = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');
const headings = lines.filter((l) => /^#{1,6} /.test(l)).map((l) => l.replace(/^#+ /, '').trim());

/** The doc's section of one state: its heading, the entry/exit/invokes line and its table, as the chart rows print them. */
function expectedSection(state: StateRows): string {
  const list = (names: readonly string[]): string => (names.length ? names.map((n) => `\`${n}\``).join(', ') : '—');
  const parts = [`#### \`${state.id}\``, `entry: ${list(state.entry)}; exit: ${list(state.exit)}; invokes: ${list(state.invokes)}`];
  if (state.rows.length) parts.push(markdownTable(state));
  return parts.join('\n');
}

/** The doc's state sections as written: from each `#### \`run…\`` heading to the end of its table. */
function writtenSections(): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < lines.length; i++) {
    const heading = /^#### `(run(?:\.[\w]+)*)`$/.exec(lines[i]!);
    if (!heading) continue;
    const block = [lines[i]!];
    for (let j = i + 1; j < lines.length && (lines[j]!.startsWith('entry:') || lines[j]!.startsWith('|')); j++) block.push(lines[j]!);
    out.set(heading[1]!, block.join('\n'));
  }
  return out;
}

describe('docs/architecture.md', () => {
  it('describes every state of the run chart, in the chart order, with exactly its transitions', () => {
    const written = writtenSections();
    expect([...written.keys()]).toEqual(chart.map((s) => s.id));
    for (const state of chart) expect(written.get(state.id), `section of ${state.id}`).toBe(expectedSection(state));
  });

  it('names every guard, action and state of the chart', () => {
    const named = new Set([...doc.matchAll(/`([\w.]+)`/g)].map((m) => m[1]!));
    expect([...guards].filter((g) => !named.has(g))).toEqual([]);
    expect([...actions].filter((a) => !named.has(a))).toEqual([]);
    expect(Object.keys(RUN_STATE).filter((key) => !named.has(key) && !named.has(RUN_STATE[key as keyof typeof RUN_STATE]))).toEqual([]);
  });

  it('calls only guards, actions and states of the chart by those words, and every other name in backticks exists in src/ or test/', () => {
    const wrong: string[] = [];
    for (const { line, n } of proseLines()) {
      for (const match of line.matchAll(/(\b\w+)?\s*`([^`]+)`/g)) {
        const before = match[1]?.toLowerCase();
        const token = match[2]!.replace(/\(.*\)$/, '');
        if (before === 'guard' && !guards.has(token)) wrong.push(`${n}: guard \`${token}\` is not in runGuards`);
        if (before === 'action' && !actions.has(token)) wrong.push(`${n}: action \`${token}\` is not in runActions`);
        if (before === 'state' && !states.has(token)) wrong.push(`${n}: state \`${token}\` is not a state of the chart`);
        // Identifiers and dotted names only: not file names, code, JSON or placeholders.
        if (!/^[A-Za-z_$][\w$]*(\.[\w$]+)*$/.test(token) || /\.(ts|md|js|json)$/.test(token)) continue;
        if (guards.has(token) || actions.has(token) || states.has(token)) continue;
        // `run.…` is a state id.
        if (token.startsWith('run.')) {
          if (!stateIds.has(token)) wrong.push(`${n}: \`${token}\` is not a state id of the chart`);
          continue;
        }
        if (!token.split('.').every((part) => codeWords.has(part))) wrong.push(`${n}: \`${token}\` does not exist in src/ or test/`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('draws only states of the chart', () => {
    const mermaid = /```mermaid\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    expect(mermaid).not.toBe('');
    const drawn = new Set<string>();
    for (const line of mermaid.split('\n')) {
      const edge = /^\s*(\S+)\s+-->\s+(\S+)/.exec(line);
      if (edge) for (const end of [edge[1]!, edge[2]!]) if (end !== '[*]') drawn.add(end);
      const composite = /^\s*state (\w+) \{/.exec(line);
      if (composite) drawn.add(composite[1]!);
    }
    expect([...drawn].filter((name) => !states.has(name))).toEqual([]);
  });

  it('links only to its own headings and to files that exist', () => {
    const anchors = new Set(headings.map(slug));
    const broken: string[] = [];
    for (const { line, n } of proseLines()) {
      for (const [, target] of line.matchAll(/\]\(([^)]+)\)/g)) {
        if (target!.startsWith('#')) {
          if (!anchors.has(target!.slice(1))) broken.push(`${n}: ${target}`);
        } else if (!/^https?:/.test(target!) && !existsSync(resolve(dirname(docPath), target!))) broken.push(`${n}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('has every section that src/ and test/ cite', () => {
    const cited: string[] = [];
    for (const file of codeFiles) {
      const text = readFileSync(file, 'utf8').replace(/\n\s*(\*|\/\/)\s*/g, ' ');
      for (const [, sections] of text.matchAll(/docs\/architecture\.md[,:]?\s*\(?((?:"[^"]+"(?:\s*(?:,|\/|and)\s*)?)+)/g)) {
        for (const [, section] of sections!.matchAll(/"([^"]+)"/g)) cited.push(`${file.slice(root.length + 1)}: "${section}"`);
      }
    }
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.filter((c) => !headings.includes(/"([^"]+)"$/.exec(c)![1]!))).toEqual([]);
  });
});
