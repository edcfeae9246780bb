import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { extractBlocks } from '../readme/blocks.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('docs/testing-agents.md', () => {
  // Its vitest block cannot run under plain node (the README harness): guide-suite.test.ts is that block, run by vitest.
  it('its vitest suite block is test/testing/guide-suite.test.ts, character for character', () => {
    const block = extractBlocks(root, 'docs/testing-agents.md').find((b) => b.key === 'docs/testing-agents.md › One test per path in vitest');
    expect(block?.mode).toBe('no-run');
    expect(block?.code).toBe(readFileSync(new URL('./guide-suite.test.ts', import.meta.url), 'utf8'));
  });
});
