import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, Runner, ToolError, UserError, type RunEvent } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { mcp, McpConnectionError, mcpToolName, renderMcpContent, type McpServer, type McpStdioOptions } from '../../src/mcp/index.js';
import { collect, completed } from '../helpers.js';
import { createFixtureServer } from '../fixtures/mcp/fixture-server.mjs';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp/stdio-server.mjs', import.meta.url));
const stdio = (extra: Partial<McpStdioOptions> = {}): McpStdioOptions => ({ name: 'fx', command: process.execPath, args: [FIXTURE], ...extra });

const outputs = (events: RunEvent[]) => Object.fromEntries(completed(events).map((e) => [e.call.id, { output: e.output, isError: e.isError }]));

describe('mcp() over stdio', () => {
  let fx: McpServer;
  beforeAll(async () => {
    fx = await mcp(stdio());
  });
  afterAll(async () => {
    await fx.close();
  });

  it('connects and exposes the server tools as <name>__<tool> with their JSON Schemas', () => {
    expect(fx.serverInfo).toEqual({ name: 'fixture', version: '1.2.3' });
    expect(fx.instructions).toBe('Fixture server for troupe tests.');
    expect(fx.connected).toBe(true);
    expect(fx.tools.map((t) => t.name)).toEqual([
      'fx__add',
      'fx__echo',
      'fx__fail',
      'fx__flaky',
      'fx__slow',
      'fx__progress',
      'fx__crash',
      'fx__env',
      'fx__rich',
      'fx__structured',
      'fx__dotted_name',
      'fx__screenshot',
    ]);
    const add = fx.tools[0]!;
    expect(add).toMatchObject({ description: 'Add two numbers.', source: "MCP server 'fx'", parallel: true, strict: false, needsApproval: false });
    expect(add.jsonSchema).toEqual({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
      additionalProperties: false,
    });
    // A schema without properties gets an empty `properties` for strict-minded providers.
    expect(fx.tools.find((t) => t.name === 'fx__env')!.jsonSchema).toEqual({ type: 'object', properties: {} });
  });

  it('runs the tools in a full agent run: results, isError results, rich and structured content', async () => {
    const model = new ScriptedModel([
      batch([
        ['fx__add', { a: 2, b: 3 }, 'add'],
        ['fx__echo', { text: 'hi' }, 'echo'],
        ['fx__fail', {}, 'fail'],
        ['fx__rich', {}, 'rich'],
        ['fx__structured', {}, 'structured'],
        ['fx__dotted_name', {}, 'dotted'],
      ]),
      text('all done'),
    ]);
    const handle = Runner.stream(new Agent({ name: 'mcp-user', model, tools: fx.tools }), 'go');
    const events = await collect(handle);
    expect((await handle.result()).output).toBe('all done');
    expect(outputs(events)).toEqual({
      add: { output: '5', isError: false },
      echo: { output: 'echo: hi', isError: false },
      fail: { output: 'the fail tool always fails', isError: true },
      rich: { output: 'a picture:\n[image: image/png, 8 bytes]\n[resource link: file:///tmp/report.txt (report)]\nembedded memo', isError: false },
      structured: { output: '{"answer":42}', isError: false },
      dotted: { output: 'dotted ok', isError: false },
    });
    expect(completed(events).find((e) => e.call.id === 'structured')!.details).toEqual({
      server: 'fx',
      tool: 'structured',
      content: [],
      structuredContent: { answer: 42 },
    });
    expect(model.requests[0]!.tools.find((t) => t.name === 'fx__echo')).toEqual({
      name: 'fx__echo',
      description: 'Echo a text back.',
      parameters: { type: 'object', properties: { text: { type: 'string', minLength: 1 } }, required: ['text'] },
      strict: false,
    });
  });

  it('checks arguments against the JSON Schema before calling (with lax coercion)', async () => {
    const model = new ScriptedModel([
      batch([
        ['fx__add', { a: '2', b: 3 }, 'coerced'],
        ['fx__add', { a: 2 }, 'missing'],
        ['fx__add', { a: 1, b: 2, c: 3 }, 'extra'],
        ['fx__echo', { text: '' }, 'short'],
        ['fx__echo', { text: 7 }, 'type'],
      ]),
      text('ok'),
    ]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'go'));
    expect(outputs(events)).toEqual({
      coerced: { output: '5', isError: false },
      missing: { output: "Tool error: Invalid arguments for tool 'fx__add': b: required property is missing", isError: true },
      extra: { output: "Tool error: Invalid arguments for tool 'fx__add': c: unexpected property", isError: true },
      short: { output: "Tool error: Invalid arguments for tool 'fx__echo': text: expected at least 1 characters", isError: true },
      type: { output: "Tool error: Invalid arguments for tool 'fx__echo': text: expected string, received integer", isError: true },
    });
    // Rejected in preflight: never started.
    expect(events.filter((e) => e.type === 'tool_call_started').map((e) => (e as { call: { id: string } }).call.id)).toEqual(['coerced']);
  });

  it('reports MCP progress notifications as tool_call_progress events', async () => {
    const model = new ScriptedModel([call('fx__progress', {}, 'p'), text('ok')]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'go'));
    expect(events.filter((e) => e.type === 'tool_call_progress').map((e) => (e as { progress: unknown }).progress)).toEqual([
      { server: 'fx', tool: 'progress', progress: 1, total: 2, message: 'half way' },
      { server: 'fx', tool: 'progress', progress: 2, total: 2, message: 'done' },
    ]);
    expect(outputs(events).p).toEqual({ output: 'progress finished', isError: false });
  });
});

describe('mcp() server-level options', () => {
  const servers: McpServer[] = [];
  const open = async (extra: Partial<McpStdioOptions>) => {
    const server = await mcp(stdio(extra));
    servers.push(server);
    return server;
  };
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it('needsApproval as a list of tool names goes through the approval flow', async () => {
    const fx = await open({ needsApproval: ['add'] });
    expect(fx.tools.find((t) => t.name === 'fx__add')!.needsApproval).toBe(true);
    expect(fx.tools.find((t) => t.name === 'fx__echo')!.needsApproval).toBe(false);
    const model = new ScriptedModel([
      batch([
        ['fx__add', { a: 1, b: 1 }, 'yes'],
        ['fx__add', { a: 2, b: 2 }, 'no'],
        ['fx__echo', { text: 'free' }, 'free'],
      ]),
      text('ok'),
    ]);
    const asked: string[] = [];
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'go'), (e) => {
      if (e.type !== 'approval_required') return;
      asked.push(e.call.id);
      if (e.call.id === 'yes') e.approve();
      else e.reject();
    });
    expect(asked).toEqual(['yes', 'no']);
    expect(outputs(events)).toEqual({
      yes: { output: '2', isError: false },
      no: { output: "Tool error: approval denied for tool 'fx__add'.", isError: true },
      free: { output: 'echo: free', isError: false },
    });
  });

  it('needsApproval as a predicate sees the server tool and the arguments', async () => {
    const seen: string[] = [];
    const fx = await open({
      needsApproval: (tool, args) => {
        seen.push(`${tool.name}:${JSON.stringify(args)}`);
        return tool.name === 'echo' && args.text === 'secret';
      },
      tools: ['echo'],
    });
    expect(fx.tools.map((t) => t.name)).toEqual(['fx__echo']);
    const model = new ScriptedModel([
      batch([
        ['fx__echo', { text: 'public' }, 'public'],
        ['fx__echo', { text: 'secret' }, 'secret'],
      ]),
      text('ok'),
    ]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'go'), (e) => {
      if (e.type === 'approval_required') e.reject();
    });
    expect(seen).toEqual(['echo:{"text":"public"}', 'echo:{"text":"secret"}']);
    expect(outputs(events).secret).toEqual({ output: "Tool error: approval denied for tool 'fx__echo'.", isError: true });
    expect(outputs(events).public).toEqual({ output: 'echo: public', isError: false });
  });

  it('retries a protocol error (a thrown ToolError naming the server)', async () => {
    const fx = await open({ retries: 1 });
    const model = new ScriptedModel([call('fx__flaky', {}, 'f'), text('ok')]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'go'));
    const failed = events.filter((e): e is Extract<RunEvent, { type: 'tool_call_failed' }> => e.type === 'tool_call_failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error).toBeInstanceOf(ToolError);
    expect(failed[0]!.error.message).toBe("MCP server 'fx' failed on tool 'flaky': MCP error -32603: flaky failure on call 1");
    expect(failed[0]).toMatchObject({ attempt: 1, willRetry: true });
    expect(outputs(events).f).toEqual({ output: 'ok on call 2', isError: false });
  });

  it('without retries a protocol error is the call result', async () => {
    const fx = await open({});
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('fx__flaky', {}, 'f'), text('ok')]), tools: fx.tools }), 'go'));
    expect(outputs(events).f).toEqual({ output: "Tool error: MCP server 'fx' failed on tool 'flaky': MCP error -32603: flaky failure on call 1", isError: true });
  });

  it('timeoutMs ends a call that never answers', async () => {
    const fx = await open({ timeoutMs: 50, tools: ['slow'] });
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('fx__slow', {}, 's'), text('ok')]), tools: fx.tools }), 'go'));
    expect(outputs(events).s).toEqual({ output: "Tool error: tool 'fx__slow' timed out after 50 ms", isError: true });
  });

  it('maxOutputChars truncates long results', async () => {
    const fx = await open({ maxOutputChars: 20, tools: ['echo'] });
    const long = 'x'.repeat(30) + 'END';
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('fx__echo', { text: long }, 'e'), text('ok')]), tools: fx.tools }), 'go'));
    const full = `echo: ${long}`;
    expect(outputs(events).e!.output).toBe(`${full.slice(0, 16)}\n\n[... tool output truncated: kept 20 of ${full.length} chars ...]\n\n${full.slice(-4)}`);
  });

  it("parallel: false makes the server's tools barriers", async () => {
    const fx = await open({ parallel: false, tools: ['add'] });
    expect(fx.tools[0]!.parallel).toBe(false);
  });

  it("validate: 'none' passes arguments to the server unchecked", async () => {
    const fx = await open({ validate: 'none', tools: ['add'] });
    const events = await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('fx__add', { a: 2 }, 'x'), text('ok')]), tools: fx.tools }), 'go'));
    expect(outputs(events).x).toEqual({ output: 'NaN', isError: false });
  });

  it('passes env and cwd to the server process', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'troupe-mcp-')));
    try {
      const fx = await open({ env: { FIXTURE_GREETING: 'hello' }, cwd: dir, tools: ['env'] });
      const events = await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('fx__env', {}, 'x'), text('ok')]), tools: fx.tools }), 'go'));
      expect(outputs(events).x).toEqual({ output: `hello from ${dir}`, isError: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a clash with another tool fails the run with a UserError naming the MCP server', async () => {
    const fx = await open({ tools: ['add'] });
    const twin = await open({ tools: ['add'] });
    const error = await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([text('never')]), tools: [...fx.tools, ...twin.tools] }), 'go').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toBe("Tool name conflict for 'fx__add' from MCP server 'fx' (also from MCP server 'fx').");
  });
});

describe('mcp() failures and lifecycle', () => {
  it('a server that dies mid-call gives a clear tool error, and later calls say the connection is lost', async () => {
    const fx = await mcp(stdio());
    try {
      const model = new ScriptedModel([call('fx__crash', {}, 'crash'), call('fx__add', { a: 1, b: 2 }, 'after'), text('ok')]);
      const result = await Runner.run(new Agent({ name: 'a', model, tools: fx.tools }), 'go');
      const results = result.transcript.filter((m) => m.role === 'tool');
      expect(results).toEqual([
        { role: 'tool', callId: 'crash', name: 'fx__crash', content: "Tool error: MCP server 'fx' failed on tool 'crash': MCP error -32000: Connection closed", isError: true },
        { role: 'tool', callId: 'after', name: 'fx__add', content: "Tool error: MCP server 'fx' failed on tool 'add': the server connection is lost", isError: true },
      ]);
      expect(fx.connected).toBe(false);
    } finally {
      await fx.close();
    }
  });

  it('close() ends the connection; calls after it fail clearly; close is idempotent', async () => {
    const fx = await mcp(stdio({ tools: ['add'] }));
    await fx.close();
    await fx.close();
    expect(fx.connected).toBe(false);
    const result = await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([call('fx__add', { a: 1, b: 2 }, 'c'), text('ok')]), tools: fx.tools }), 'go');
    expect(result.transcript.find((m) => m.role === 'tool')).toMatchObject({
      content: "Tool error: MCP server 'fx' failed on tool 'add': the server connection was closed",
      isError: true,
    });
  });

  it('a command that cannot start is an McpConnectionError', async () => {
    const error = await mcp({ name: 'nope', command: '/nonexistent/troupe-mcp-server' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpConnectionError);
    expect((error as Error).message).toBe("MCP server 'nope' could not connect: spawn /nonexistent/troupe-mcp-server ENOENT");
  });

  it('a server that exits before the handshake is an McpConnectionError with its stderr', async () => {
    const error = await mcp(stdio({ env: { FIXTURE_FAIL_START: '1' } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpConnectionError);
    expect(error).toMatchObject({ server: 'fx', stderr: 'fixture: refusing to start (FIXTURE_FAIL_START=1)' });
    expect((error as Error).message).toBe(
      "MCP server 'fx' could not connect: MCP error -32000: Connection closed\n  server stderr: fixture: refusing to start (FIXTURE_FAIL_START=1)",
    );
  });

  it('rejects bad options with a UserError', async () => {
    await expect(mcp({ name: 'bad name', command: 'x' })).rejects.toThrow(
      "MCP server name 'bad name' is invalid: use 1-32 characters from a-z, A-Z, 0-9, '_' and '-'.",
    );
    await expect(mcp({ name: 'both', command: 'x', url: 'http://127.0.0.1:1/mcp' } as never)).rejects.toThrow(
      "MCP server 'both': give either { command, args } (stdio) or { url } (streamable HTTP).",
    );
    await expect(mcp({ name: 'u', url: 'not a url' })).rejects.toBeInstanceOf(UserError);
  });
});

describe('mcp() over streamable HTTP', () => {
  let http: HttpServer;
  let url: string;
  const seenHeaders: IncomingHttpHeaders[] = [];
  const seenMethods: string[] = [];
  beforeAll(async () => {
    const { server } = createFixtureServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    await server.connect(transport);
    http = createServer((req, res) => {
      seenHeaders.push(req.headers);
      seenMethods.push(req.method ?? '');
      void transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });

  it('connects by URL, runs the tools in an agent run, and ends the session on close', async () => {
    const web = await mcp({ name: 'web', url, headers: { 'x-api-key': 'k1' }, tools: ['add', 'fail'] });
    try {
      expect(web.tools.map((t) => t.name)).toEqual(['web__add', 'web__fail']);
      const model = new ScriptedModel([batch([['web__add', { a: 20, b: 22 }, 'a'], ['web__fail', {}, 'f']]), text('ok')]);
      const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: web.tools }), 'go'));
      expect(outputs(events)).toEqual({ a: { output: '42', isError: false }, f: { output: 'the fail tool always fails', isError: true } });
      expect(seenHeaders.every((h) => h['x-api-key'] === 'k1')).toBe(true);
    } finally {
      await web.close();
    }
    expect(seenMethods.at(-1)).toBe('DELETE');
  });

  it('an unreachable URL is an McpConnectionError', async () => {
    const error = await mcp({ name: 'gone', url: 'http://127.0.0.1:1/mcp' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpConnectionError);
    expect((error as Error).message).toMatch(/^MCP server 'gone' could not connect: /);
  });
});

describe('MCP helpers', () => {
  it('mcpToolName sanitizes and shortens with a stable hash', () => {
    expect(mcpToolName('gh', 'create_issue')).toBe('gh__create_issue');
    expect(mcpToolName('fs', 'read.file/v2')).toBe('fs__read_file_v2');
    const long = mcpToolName('srv', 'a'.repeat(80));
    expect(long).toHaveLength(64);
    expect(long).toMatch(/^srv__a{50}_[0-9a-f]{8}$/);
    expect(mcpToolName('srv', 'a'.repeat(80))).toBe(long);
    expect(mcpToolName('srv', 'a'.repeat(81))).not.toBe(long);
  });

  it('renderMcpContent renders blocks, structured content and legacy results', () => {
    expect(renderMcpContent({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).toBe('a\nb');
    expect(renderMcpContent({ content: [{ type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }] })).toBe('[audio: audio/wav, 3 bytes]');
    expect(renderMcpContent({ content: [{ type: 'resource', resource: { uri: 'x://b', mimeType: 'application/pdf', blob: 'AAA=' } }] })).toBe(
      '[resource: x://b, application/pdf, 2 bytes]',
    );
    expect(renderMcpContent({ content: [], structuredContent: { ok: true } })).toBe('{"ok":true}');
    expect(renderMcpContent({ toolResult: { legacy: 1 } })).toBe('{"legacy":1}');
    expect(renderMcpContent({ content: [] })).toBe('');
  });
});
