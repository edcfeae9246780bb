import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './example-project.js';

const examples = join(REPO_ROOT, 'examples');
const folders = readdirSync(examples, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();

describe('examples/', () => {
  it('has the four examples, each with a README, a package.json and a test of its own', () => {
    expect(folders).toEqual(['cluster-postgres', 'durable-approval', 'support-desk', 'usechat-browser']);
    for (const name of folders) {
      expect([name, existsSync(join(examples, name, 'README.md')), existsSync(join(examples, name, 'package.json'))]).toEqual([name, true, true]);
      expect(existsSync(join(REPO_ROOT, 'test', 'examples', `${name}.test.ts`)), `test/examples/${name}.test.ts`).toBe(true);
    }
  });

  it('examples/README.md links each example, and the README links examples/README.md', () => {
    const index = readFileSync(join(examples, 'README.md'), 'utf8');
    expect([...index.matchAll(/^\| \[([\w-]+)\]\(([\w-]+)\/\) \|/gm)].map((m) => [m[1], m[2]])).toEqual([
      ['support-desk', 'support-desk'],
      ['durable-approval', 'durable-approval'],
      ['usechat-browser', 'usechat-browser'],
      ['cluster-postgres', 'cluster-postgres'],
    ]);
    expect(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).toContain('| [Examples](examples/README.md) |');
  });

  it('every relative link in the examples\' READMEs points to an existing file and heading', () => {
    const readmes = ['examples/README.md', ...folders.map((name) => `examples/${name}/README.md`)];
    const broken = readmes.flatMap((file) => {
      const prose = readFileSync(join(REPO_ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`]*`/g, '``');
      return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].flatMap(([, target]) => {
        if (/^[a-z]+:/i.test(target!)) return [];
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const linked = join(REPO_ROOT, dirname(file), path);
        if (!existsSync(linked)) return [`${file}: ${target} (no such file)`];
        if (anchor !== undefined && !headingAnchors(linked).includes(anchor)) return [`${file}: ${target} (no such heading)`];
        return [];
      });
    });
    expect(broken).toEqual([]);
  });
});

/** GitHub's anchors of a markdown file's headings (lower case, punctuation dropped, spaces as hyphens). */
function headingAnchors(file: string): string[] {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/^#{1,6}\s+(.*?)\s*$/gm)].map(([, heading]) =>
    heading!.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/ /g, '-'),
  );
}
