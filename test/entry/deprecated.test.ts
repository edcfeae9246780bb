import { describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';
import { Agent, Runner, type ScriptedModel as DeprecatedScriptedModel } from '../../src/index.js';
import { McpConnectionError } from '../../src/entry/mcp.js';
import * as server from '../../src/entry/server.js';
import { ScriptedModel, text } from '../../src/entry/testing.js';

// The root keeps moved names for one version without loading their modules
// (src/deprecated.ts): async functions load on call, classes are types only.
describe('deprecated root aliases', () => {
  it('createServer from the root loads troupe/server on call and serves the agents', async () => {
    const app = await root.createServer({ agents: { hello: () => new Agent({ name: 'hello', model: new ScriptedModel([text('hi')]) }) } });
    try {
      const response = await fetch(`${app.url}/api/runs`, { headers: { authorization: `Bearer ${app.token}` } });
      expect(response.status).toBe(200);
    } finally {
      await app.close();
    }
    expect(root.createServer).not.toBe(server.createServer);
  });

  it('startDemoServer from the root starts the demo server', async () => {
    const lines: string[] = [];
    const app = await root.startDemoServer({ out: (line) => lines.push(line) });
    await app.close();
    expect(lines[0]).toBe(`troupe server listening on ${app.url}\n  inspector: ${app.inspectorUrl}\n  token:     ${app.token}  (send "Authorization: Bearer <token>" to ${app.url}/api/…)`);
  });

  it('mcp from the root rejects with the McpConnectionError class of troupe/mcp', async () => {
    const failure = await root.mcp({ name: 'gone', command: '/nonexistent/troupe-mcp-server' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpConnectionError);
    expect((failure as Error).message).toMatch(/^MCP server 'gone' could not connect: /);
  });

  it('moved classes are types in the root (annotations keep compiling), values only in their subpath', async () => {
    const model: DeprecatedScriptedModel = new ScriptedModel([text('typed')]);
    expect((await Runner.run(new Agent({ name: 'a', model }), 'x')).output).toBe('typed');
    expect(Object.keys(root)).not.toContain('ScriptedModel');
  });
});
