import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InvalidToolArguments, ToolError, tool } from '../src/index.js';
import { retryDelayMs } from '../src/actors/call-pipeline.js';
import { defaultRender, formatToolError } from '../src/tools/render.js';
import { truncateOutput } from '../src/tools/truncate.js';
import { validateArguments } from '../src/tools/validate.js';

const add = tool({ name: 'add', description: 'Add.', parameters: z.object({ a: z.number(), b: z.number(), flag: z.boolean().default(false) }), execute: () => 0 });

describe('validateArguments', () => {
  it('passes valid arguments through zod (defaults applied)', () => {
    expect(validateArguments(add, { a: 1, b: 2 })).toEqual({ a: 1, b: 2, flag: false });
  });

  it('coerces lax model output: numeric strings and boolean strings', () => {
    expect(validateArguments(add, { a: '1', b: ' 2.5 ', flag: 'true' })).toEqual({ a: 1, b: 2.5, flag: true });
  });

  it('names every bad path in one compact message', () => {
    let error: unknown;
    try {
      validateArguments(add, { a: 'x', flag: 3 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidToolArguments);
    expect((error as Error).message).toBe(
      "Invalid arguments for tool 'add': a: Invalid input: expected number, received string; b: Invalid input: expected number, received undefined; flag: Invalid input: expected boolean, received number",
    );
    expect((error as InvalidToolArguments).issues.map((i) => i.path)).toEqual(['a', 'b', 'flag']);
  });

  it('reads strict-mode nulls as absent optional values', () => {
    const t = tool({ name: 'opt', description: 'd', strict: true, parameters: z.object({ q: z.string(), n: z.number().default(3) }), execute: () => 0 });
    expect(validateArguments(t, { q: 'x', n: null })).toEqual({ q: 'x', n: 3 });
    expect(() => validateArguments(t, { q: null, n: 1 })).toThrow("Invalid arguments for tool 'opt': q: Invalid input: expected string, received null");
  });

  it('names nested paths with dots', () => {
    const t = tool({ name: 'nest', description: 'd', parameters: z.object({ items: z.array(z.object({ id: z.string() })) }), execute: () => 0 });
    expect(() => validateArguments(t, { items: [{ id: 'a' }, { id: 7 }] })).toThrow(
      "Invalid arguments for tool 'nest': items.1.id: Invalid input: expected string, received number",
    );
  });
});

describe('truncateOutput', () => {
  it('keeps short output untouched', () => {
    expect(truncateOutput('abc', 3)).toEqual({ text: 'abc', truncated: false });
    expect(truncateOutput('x'.repeat(10), null)).toEqual({ text: 'x'.repeat(10), truncated: false });
  });

  it('keeps 80% head and 20% tail with the exact marker and thousands separators', () => {
    const input = 'a'.repeat(800) + 'b'.repeat(1200);
    const { text, truncated } = truncateOutput(input, 1000);
    expect(truncated).toBe(true);
    expect(text).toBe('a'.repeat(800) + '\n\n[... tool output truncated: kept 1,000 of 2,000 chars ...]\n\n' + 'b'.repeat(200));
  });

  it('counts code points, never splitting a surrogate pair', () => {
    const input = '😀'.repeat(10); // 20 UTF-16 units, 10 code points
    expect(truncateOutput(input, 10)).toEqual({ text: input, truncated: false });
    expect(truncateOutput(input, 5).text).toBe('😀😀😀😀\n\n[... tool output truncated: kept 5 of 10 chars ...]\n\n😀');
  });

  it('keeps at least one head character for tiny limits', () => {
    expect(truncateOutput('abcdef', 1).text).toBe('a\n\n[... tool output truncated: kept 1 of 6 chars ...]\n\n');
  });
});

describe('rendering and error text', () => {
  it('renders strings as they are and other values as JSON', () => {
    expect(defaultRender('plain')).toBe('plain');
    expect(defaultRender({ a: 1, big: 10n })).toBe('{"a":1,"big":"10"}');
    expect(defaultRender(undefined)).toBe('');
  });

  it('formats exceptions as "Tool error: …" with the ToolError hint line', () => {
    expect(formatToolError(new Error('boom'))).toBe('Tool error: boom');
    expect(formatToolError(new ToolError('rate limited', { hint: 'retry in 60 s' }))).toBe('Tool error: rate limited\n  hint: retry in 60 s');
    class Weird extends Error {}
    expect(formatToolError(new Weird())).toBe('Tool error: Weird');
    expect(formatToolError('text')).toBe('Tool error: text');
  });

  it('backs off min(5000, 100·2^(n-1)) ms', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 10].map(retryDelayMs)).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000]);
  });
});
