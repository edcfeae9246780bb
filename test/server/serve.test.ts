import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { serve } from '../../src/cli/serve.js';
import { SqliteCheckpointStore } from '../../src/entry/sqlite.js';
import { call, openSse } from './helpers.js';

describe('troupe serve', () => {
  it('checkpoints every run to the SQLite file given by --db', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-serve-'));
    const db = join(dir, 'runs.sqlite');
    const lines: string[] = [];
    const path = fileURLToPath(new URL('./fixtures/agents-module.ts', import.meta.url));
    const server = await serve(['--port', '0', '--agents', path, '--db', db], (line) => lines.push(line));
    try {
      expect(lines[0]).toBe(`  runs are checkpointed to ${db}`);
      const sse = await openSse(server, 'POST', '/api/chat', { body: { agent: 'calc', input: 'add' } });
      await sse.all();
      const runId = (await call(server, 'GET', '/api/runs')).json.runs[0].runId as string;
      const store = new SqliteCheckpointStore(db);
      const saved = store.load(runId)!;
      store.close();
      expect(saved.head).toMatchObject({ agent: 'calc', status: 'completed', output: 'done' });
      expect(saved.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'result', 'result', 'turn_end', 'reply', 'turn_end']);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves the demo by default and prints the URL, the inspector URL with the token, and the token', async () => {
    const lines: string[] = [];
    const server = await serve(['--port', '0', '--token', 'serve-test-token', '--db', 'off'], (line) => lines.push(line));
    try {
      const text = lines.join('\n');
      expect(text).toContain(`troupe server listening on ${server.url}`);
      expect(text).toContain(`inspector: ${server.url}/#token=serve-test-token`);
      expect(text).toContain('token:     serve-test-token');
      expect(server.host).toBe('127.0.0.1');
      expect((await call(server, 'GET', '/api/agents')).json).toEqual({ agents: ['demo'] });
    } finally {
      await server.close();
    }
  });

  it('loads agents from a module and generates a token when none is given', async () => {
    const lines: string[] = [];
    const path = fileURLToPath(new URL('./fixtures/agents-module.ts', import.meta.url));
    const saved = process.env.TROUPE_TOKEN;
    delete process.env.TROUPE_TOKEN;
    const server = await serve(['--port', '0', '--agents', path, '--inspect', 'off', '--db', 'off'], (line) => lines.push(line));
    try {
      expect(server.token).toMatch(/^[\w-]{32}$/);
      expect(lines.join('\n')).toContain(`token:     ${server.token}`);
      expect(lines.join('\n')).toContain('agents:    calc');
      expect((await call(server, 'GET', '/api/agents')).json).toEqual({ agents: ['calc'] });
    } finally {
      if (saved !== undefined) process.env.TROUPE_TOKEN = saved;
      await server.close();
    }
  });

  it('rejects bad arguments with the usage text', async () => {
    await expect(serve(['--port', 'abc'])).rejects.toThrow(/--port must be an integer[\s\S]*usage: troupe serve/);
    await expect(serve(['--inspect', 'sometimes'])).rejects.toThrow(/--inspect must be on-demand, always or off/);
    await expect(serve(['--bogus'])).rejects.toThrow(/Unknown option '--bogus'/);
  });

  it('refuses a short token before it opens the store or prints anything', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-serve-token-'));
    const lines: string[] = [];
    const db = join(dir, 'runs.sqlite');
    await expect(serve(['--token', 'secret', '--db', db], (line) => lines.push(line))).rejects.toThrow(
      /^--token must be at least 8 characters without whitespace \(leave it out for a random one\)\.\n\nusage: troupe serve/,
    );
    expect(lines).toEqual([]);
    expect(existsSync(db)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });
});
