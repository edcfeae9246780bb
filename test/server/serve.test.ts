import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { serve } from '../../src/cli/serve.js';
import { call } from './helpers.js';

describe('troupe serve', () => {
  it('serves the demo by default and prints the URL, the inspector URL with the token, and the token', async () => {
    const lines: string[] = [];
    const server = await serve(['--port', '0', '--token', 'serve-test-token'], (line) => lines.push(line));
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
    const server = await serve(['--port', '0', '--agents', path, '--inspect', 'off'], (line) => lines.push(line));
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
});
