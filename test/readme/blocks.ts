/**
 * The ```ts blocks of the README and docs/*.md, with how each is tested. A block is:
 *   - run (the default): a complete program, typechecked against the built package and
 *     run under plain node (see readme.test.ts);
 *   - typechecked only: the line before it is `<!-- no-run: <why> -->` (it needs a real
 *     MCP server, a network, a person at the terminal);
 *   - a fragment: the line before it is `<!-- fragment -->` (signatures, excerpts that use
 *     names from the surrounding text); neither compiled nor run.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export type BlockMode = 'run' | 'no-run' | 'fragment';

export interface Block {
  /** `<file> › <heading>`, plus ` #<n>` for the n-th block (n ≥ 2) under one heading. */
  readonly key: string;
  readonly file: string;
  /** 1-based line of the block's first code line in its file. */
  readonly line: number;
  readonly mode: BlockMode;
  readonly code: string;
}

const FENCE = /^```(\S*)\s*$/;
const MARKER = /^<!--\s*(fragment|no-run)(?::\s*(.+?))?\s*-->$/;

export function markdownFiles(root: string): string[] {
  const docs = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).sort();
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

export function extractBlocks(root: string, file: string): Block[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  const perHeading = new Map<string, number>();
  let heading = '(top)';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heading_ = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading_) heading = heading_[1]!.trim();
    const fence = FENCE.exec(line);
    if (!fence) continue;
    const start = i;
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++);
    if (fence[1] !== 'ts' && fence[1] !== 'typescript') continue;
    const before = lines.slice(0, start).reverse().find((l) => l.trim() !== '') ?? '';
    const marker = MARKER.exec(before.trim());
    const n = (perHeading.get(heading) ?? 0) + 1;
    perHeading.set(heading, n);
    blocks.push({
      key: `${file} › ${heading}${n > 1 ? ` #${n}` : ''}`,
      file,
      line: start + 2,
      mode: marker ? (marker[1] as BlockMode) : 'run',
      code: lines.slice(start + 1, i).join('\n') + '\n',
    });
  }
  return blocks;
}
