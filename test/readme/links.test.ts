import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { markdownFiles } from './blocks.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The README is what a newcomer reads first: everything else lives in docs/. */
const README_MAX_LINES = 300;

/**
 * Guides other branches are writing, linked from the README's docs map before they land. A
 * link to one of these is tolerated only while the file does not exist; once it does, its
 * headings are checked like every other file's.
 */
const PENDING_DOCS = new Set(['docs/architecture.md', 'docs/testing-agents.md']);

interface Link {
  /** The markdown file the link is in, relative to the repository root. */
  readonly from: string;
  readonly line: number;
  readonly target: string;
}

/** Lines outside fenced code blocks (a `#` or `[x](y)` inside a shell or ts block is code). */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (/^```/.test(line)) fenced = !fenced;
    else if (!fenced) out.push({ line: index + 1, text: line });
  });
  return out;
}

/** Every link and image target of a markdown file's prose, inline code spans left out. */
function linksOf(file: string): Link[] {
  const links: Link[] = [];
  for (const { line, text } of proseLines(readFileSync(join(root, file), 'utf8'))) {
    const prose = text.replace(/`[^`]*`/g, '``');
    for (const match of prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push({ from: file, line, target: match[1]! });
  }
  return links;
}

/** GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown file's headings, numbered as GitHub numbers repeated ones. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(readFileSync(join(root, file), 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** What is wrong with a relative link, or undefined when it resolves to a file and heading. */
function brokenReason(link: Link): string | undefined {
  const [path, anchor] = link.target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? link.from : normalize(join(dirname(link.from), decodeURIComponent(path)));
  if (relative(root, join(root, file)).startsWith('..')) return 'points outside the repository';
  if (!existsSync(join(root, file))) return PENDING_DOCS.has(file) ? undefined : `${file} does not exist`;
  if (anchor === undefined) return undefined;
  if (!file.endsWith('.md') || statSync(join(root, file)).isDirectory()) return `#${anchor} on a file that is not markdown`;
  return anchorsOf(file).has(anchor) ? undefined : `${file} has no heading #${anchor}`;
}

const files = markdownFiles(root);
const relativeLinks = files.flatMap(linksOf).filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link.target));

describe('README and docs links', () => {
  it(`the README is at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(join(root, 'README.md'), 'utf8').replace(/\n$/, '').split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('every relative link in README.md and docs/*.md points to an existing file and heading', () => {
    const broken = relativeLinks.flatMap((link) => {
      const reason = brokenReason(link);
      return reason ? [`${link.from}:${link.line}: (${link.target}) ${reason}`] : [];
    });
    expect(broken).toEqual([]);
    // The check looks at real links: the README alone has a dozen guides and the inspector picture.
    expect(relativeLinks.filter((l) => l.from === 'README.md').length).toBeGreaterThan(15);
  });

  it('the README links every guide in docs/', () => {
    const linked = new Set(relativeLinks.filter((l) => l.from === 'README.md').map((l) => l.target.split('#')[0]));
    expect(files.filter((f) => f !== 'README.md' && !linked.has(f))).toEqual([]);
  });

  it('computes anchors the way GitHub does', () => {
    expect(slug('Long runs: context compaction (`contextPolicy`)')).toBe('long-runs-context-compaction-contextpolicy');
    expect(slug("Using Stately's inspector")).toBe('using-statelys-inspector');
    expect(slug('Limits and DNS-rebinding defence')).toBe('limits-and-dns-rebinding-defence');
    expect(slug('Suspend, decide, resume')).toBe('suspend-decide-resume');
  });
});
