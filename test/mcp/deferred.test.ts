import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, Runner, ToolError, type RunEvent } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { mcp, type McpServer, type McpStdioOptions } from '../../src/mcp/index.js';
import { collect, completed } from '../helpers.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp/stdio-server.mjs', import.meta.url));
const deferred = (extra: Partial<McpStdioOptions> = {}): McpStdioOptions => ({ name: 'fx', command: process.execPath, args: [FIXTURE], defer: true, ...extra });
const outputs = (events: RunEvent[]) => Object.fromEntries(completed(events).map((e) => [e.call.id, { output: e.output, isError: e.isError }]));
const ALL = 'fx__add, fx__echo, fx__fail, fx__flaky, fx__slow, fx__progress, fx__crash, fx__env, fx__rich, fx__structured, fx__dotted_name, fx__screenshot';
const ADD_SCHEMA = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false };

describe('mcp({ defer: true }) against the real stdio fixture server', () => {
  let fx: McpServer;
  beforeAll(async () => {
    fx = await mcp(deferred());
  });
  afterAll(async () => {
    await fx.close();
  });

  it('exposes search_mcp_tools and call_mcp_tool instead of every schema', () => {
    expect(fx.tools.map((t) => t.name)).toEqual(['search_mcp_tools', 'call_mcp_tool']);
    expect(fx.serverTools).toHaveLength(12);
    expect(fx.tools[1]!.jsonSchema).toEqual({
      type: 'object',
      properties: { name: { type: 'string', description: 'The tool\'s name as search_mcp_tools gives it.' }, arguments: { type: 'object', description: "The tool's arguments, matching its inputSchema." } },
      required: ['name'],
      additionalProperties: false,
    });
    expect(fx.tools[1]!.needsApproval).toBe(false);
  });

  it('search returns names, descriptions and schemas of the matches, best first; no match lists the tools', async () => {
    const model = new ScriptedModel([
      batch([
        ['search_mcp_tools', { query: 'add numbers' }, 's1'],
        ['search_mcp_tools', { query: 'weather' }, 's2'],
        ['search_mcp_tools', { query: 'returns', limit: 2 }, 's3'],
      ]),
      text('ok'),
    ]);
    const out = outputs(await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'go')));
    expect(JSON.parse(out.s1!.output)).toEqual({ tools: [{ name: 'fx__add', description: 'Add two numbers.', inputSchema: ADD_SCHEMA }], matches: 1 });
    expect(out.s2).toEqual({ output: `No tool of MCP server 'fx' matches "weather". Its tools: ${ALL}.`, isError: false });
    const returns = JSON.parse(out.s3!.output);
    expect(returns.tools.map((t: { name: string }) => t.name)).toEqual(['fx__fail', 'fx__rich']);
    expect(returns.matches).toBe(4);
  });

  it('call runs the inner tool by its troupe or server name, with its arguments coerced and validated', async () => {
    const model = new ScriptedModel([
      batch([
        ['call_mcp_tool', { name: 'fx__add', arguments: { a: 2, b: 3 } }, 'sum'],
        ['call_mcp_tool', { name: 'echo', arguments: { text: 'hi' } }, 'echo'],
        ['call_mcp_tool', { name: 'fx__add', arguments: { a: '40', b: 2 } }, 'coerced'],
        ['call_mcp_tool', { name: 'fx__fail' }, 'fail'],
      ]),
      text('ok'),
    ]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'go'));
    expect(outputs(events)).toEqual({
      sum: { output: '5', isError: false },
      echo: { output: 'echo: hi', isError: false },
      coerced: { output: '42', isError: false },
      fail: { output: 'the fail tool always fails', isError: true },
    });
  });

  it('an unknown inner tool and invalid inner arguments are preflight error results: the server is never called', async () => {
    const model = new ScriptedModel([
      batch([
        ['call_mcp_tool', { name: 'fx__nope', arguments: {} }, 'unknown'],
        ['call_mcp_tool', { name: 'fx__add', arguments: { a: 'x' } }, 'invalid'],
        ['call_mcp_tool', { name: 'fx__echo', arguments: 'hi' }, 'notObject'],
        ['call_mcp_tool', { arguments: {} }, 'noName'],
      ]),
      text('ok'),
    ]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'go'));
    expect(events.some((e) => e.type === 'tool_call_started')).toBe(false);
    expect(outputs(events)).toEqual({
      unknown: { output: `Tool error: Invalid arguments for tool 'call_mcp_tool': name: MCP server 'fx' has no tool 'fx__nope'; find tools with search_mcp_tools (its tools: ${ALL})`, isError: true },
      invalid: {
        output: "Tool error: Invalid arguments for tool 'call_mcp_tool': arguments.b: required property is missing (tool 'fx__add'); arguments.a: expected number, received string (tool 'fx__add')",
        isError: true,
      },
      notObject: { output: "Tool error: Invalid arguments for tool 'call_mcp_tool': arguments: expected an object of arguments for 'fx__echo'", isError: true },
      noName: { output: "Tool error: Invalid arguments for tool 'call_mcp_tool': name: expected a tool name (string), received nothing", isError: true },
    });
  });
});

describe('mcp({ defer: true }): approvals, retries and timeouts apply to the inner tool', () => {
  const open: McpServer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  const connect = async (extra: Partial<McpStdioOptions>) => {
    const server = await mcp(deferred(extra));
    open.push(server);
    return server;
  };

  it('an approval predicate sees the inner tool and its validated arguments', async () => {
    const seen: string[] = [];
    const fx = await connect({
      needsApproval: (tool, args) => {
        seen.push(`${tool.name}:${JSON.stringify(args)}`);
        return tool.name === 'echo' && args.text === 'secret';
      },
    });
    const model = new ScriptedModel([
      batch([
        ['call_mcp_tool', { name: 'fx__echo', arguments: { text: 'public' } }, 'public'],
        ['call_mcp_tool', { name: 'fx__echo', arguments: { text: 'secret' } }, 'secret'],
        ['call_mcp_tool', { name: 'fx__add', arguments: { a: '1', b: 1 } }, 'sum'],
      ]),
      text('ok'),
    ]);
    const asked: unknown[] = [];
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'go'), (e) => {
      if (e.type === 'approval_required') {
        asked.push(e.args);
        e.reject('not that one');
      }
    });
    expect(seen).toEqual(['echo:{"text":"public"}', 'echo:{"text":"secret"}', 'add:{"a":1,"b":1}']);
    expect(asked).toEqual([{ name: 'fx__echo', arguments: { text: 'secret' } }]);
    expect(outputs(events)).toEqual({
      public: { output: 'echo: public', isError: false },
      secret: { output: "Tool error: approval denied for tool 'call_mcp_tool': not that one", isError: true },
      sum: { output: '2', isError: false },
    });
  });

  it('a list of tool names needs approval for those inner tools only; search never does', async () => {
    const fx = await connect({ needsApproval: ['add'] });
    const model = new ScriptedModel([
      batch([
        ['search_mcp_tools', { query: 'add' }, 'find'],
        ['call_mcp_tool', { name: 'fx__echo', arguments: { text: 'free' } }, 'free'],
        ['call_mcp_tool', { name: 'fx__add', arguments: { a: 1, b: 2 } }, 'gated'],
      ]),
      text('ok'),
    ]);
    const gated: string[] = [];
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'go'), (e) => {
      if (e.type === 'approval_required') {
        gated.push(e.call.id);
        e.approve();
      }
    });
    expect(gated).toEqual(['gated']);
    expect(outputs(events).gated).toEqual({ output: '3', isError: false });
    expect(outputs(events).free).toEqual({ output: 'echo: free', isError: false });
  });

  it('retries wrap the inner call; timeoutMs ends an inner call that never answers', async () => {
    const fx = await connect({ retries: 1, timeoutMs: 2000 });
    const model = new ScriptedModel([call('call_mcp_tool', { name: 'fx__flaky' }, 'f'), text('ok')]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'go'));
    const failed = events.filter((e): e is Extract<RunEvent, { type: 'tool_call_failed' }> => e.type === 'tool_call_failed');
    expect(failed.map((e) => [e.attempt, e.willRetry])).toEqual([[1, true]]);
    expect(failed[0]!.error).toBeInstanceOf(ToolError);
    expect(failed[0]!.error.message).toBe("MCP server 'fx' failed on tool 'flaky': MCP error -32603: flaky failure on call 1");
    expect(outputs(events).f).toEqual({ output: 'ok on call 2', isError: false });

    const slow = await connect({ timeoutMs: 50 });
    const timedOut = await collect(Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([call('call_mcp_tool', { name: 'fx__slow' }, 's'), text('ok')]), tools: slow.tools }), 'go'));
    expect(outputs(timedOut).s).toEqual({ output: "Tool error: tool 'call_mcp_tool' timed out after 50 ms", isError: true });
  });
});
