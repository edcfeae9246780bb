import { createHash } from 'node:crypto';
// Type-only at the top: the SDK is loaded by mcp() itself, so `import 'troupe'` stays light.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolError, TroupeError, UserError } from '../errors.js';
import { importPeer } from '../peers.js';
import type { RunContext } from '../tools/context.js';
import { rawTool } from '../tools/raw-tool.js';
import { toolResult } from '../tools/result.js';
import type { JsonSchema } from '../tools/schema.js';
import { hasMedia } from '../message-parts.js';
import { contentParts, renderContent } from './mcp-content.js';
import { deferredTools } from './deferred-tools.js';
import type { Tool } from '../tools/tool.js';

const MCP_SDK = '@modelcontextprotocol/sdk';

export type { McpApproval, McpCommonOptions, McpToolInfo } from './mcp-options.js';
import type { McpApproval, McpCommonOptions, McpToolInfo } from './mcp-options.js';

export interface McpStdioOptions extends McpCommonOptions {
  command: string;
  args?: readonly string[];
  /** Added to a safe default environment (PATH, HOME, …), not to all of process.env. */
  env?: Record<string, string>;
  cwd?: string;
  /** "pipe" (default) keeps the server's stderr for error messages; "inherit" shows it. */
  stderr?: 'pipe' | 'inherit' | 'ignore';
}

export interface McpHttpOptions extends McpCommonOptions {
  /** Streamable HTTP endpoint, e.g. http://localhost:3000/mcp. */
  url: string | URL;
  headers?: Record<string, string>;
}

export type McpServerOptions = McpStdioOptions | McpHttpOptions;

/** A connected MCP server: give `tools` to an agent, `close()` when done. */
export interface McpServer {
  readonly name: string;
  /** Troupe tools named `<name>__<tool>`; with `defer: true`, `search_mcp_tools` and `call_mcp_tool`. */
  readonly tools: Tool[];
  /** The tools as the server listed them. */
  readonly serverTools: readonly McpToolInfo[];
  readonly serverInfo: { readonly name: string; readonly version: string } | undefined;
  readonly instructions: string | undefined;
  /** The underlying SDK client, for resources, prompts and anything else. */
  readonly client: Client;
  /** False after close() or when the connection dropped. */
  readonly connected: boolean;
  /** Closes the connection (for stdio: ends the server process). Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Connecting to an MCP server failed (spawn, handshake or tool listing). */
export class McpConnectionError extends TroupeError {
  override readonly code = 'MCP_CONNECTION_ERROR';
  readonly server: string;
  /** The end of the server's stderr, when it was piped. */
  readonly stderr: string;
  constructor(server: string, message: string, stderr: string, cause?: unknown) {
    super(`MCP server '${server}' could not connect: ${message}${stderr ? `\n  server stderr: ${stderr}` : ''}`, { cause });
    this.server = server;
    this.stderr = stderr;
  }
}

const SERVER_NAME = /^[a-zA-Z0-9_-]{1,32}$/;
const STDERR_KEEP = 2000;
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/**
 * Connects to an MCP server (stdio: `{ command, args }`, streamable HTTP: `{ url }`),
 * lists its tools and exposes them as troupe tools.
 *
 * ```ts
 * const files = await mcp({ name: 'fs', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] });
 * const agent = new Agent({ name: 'a', model, tools: [...files.tools] });
 * try { await Runner.run(agent, 'List the files.'); } finally { await files.close(); }
 * ```
 */
export async function mcp(options: McpServerOptions): Promise<McpServer> {
  if (!options || typeof options.name !== 'string' || !SERVER_NAME.test(options.name)) {
    throw new UserError(`MCP server name '${String(options?.name)}' is invalid: use 1-32 characters from a-z, A-Z, 0-9, '_' and '-'.`);
  }
  const isStdio = 'command' in options && options.command !== undefined;
  const isHttp = 'url' in options && options.url !== undefined;
  if (isStdio === isHttp) {
    throw new UserError(`MCP server '${options.name}': give either { command, args } (stdio) or { url } (streamable HTTP).`);
  }
  let stderr = '';
  let transport: Transport;
  let endSession: (() => Promise<void>) | undefined;
  if (isStdio) {
    const o = options as McpStdioOptions;
    const { StdioClientTransport } = await importPeer(() => import('@modelcontextprotocol/sdk/client/stdio.js'), MCP_SDK, 'troupe/mcp');
    const stdio = new StdioClientTransport({
      command: o.command,
      args: [...(o.args ?? [])],
      ...(o.env ? { env: o.env } : {}),
      ...(o.cwd ? { cwd: o.cwd } : {}),
      stderr: o.stderr ?? 'pipe',
    });
    // The stream exists before start(); read it so the pipe never fills up.
    stdio.stderr?.on('data', (chunk: Buffer | string) => {
      stderr = (stderr + chunk.toString()).slice(-STDERR_KEEP);
    });
    transport = stdio;
  } else {
    const o = options as McpHttpOptions;
    let url: URL;
    try {
      url = new URL(o.url);
    } catch {
      throw new UserError(`MCP server '${o.name}': '${String(o.url)}' is not a URL.`);
    }
    const { StreamableHTTPClientTransport } = await importPeer(() => import('@modelcontextprotocol/sdk/client/streamableHttp.js'), MCP_SDK, 'troupe/mcp');
    const http = new StreamableHTTPClientTransport(url, o.headers ? { requestInit: { headers: o.headers } } : undefined);
    // Ends the session on the server too (best effort; servers may answer 405).
    endSession = () => http.terminateSession().catch(() => {});
    transport = http;
  }

  const { Client } = await importPeer(() => import('@modelcontextprotocol/sdk/client/index.js'), MCP_SDK, 'troupe/mcp');
  const client = new Client({ name: 'troupe', version: '0.1.0' }, { capabilities: {} });
  const requestTimeout = Math.max(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, options.timeoutMs ?? 0);
  let connected = false;
  let closed = false;
  const serverTools: McpToolInfo[] = [];
  client.onclose = () => {
    connected = false;
  };
  try {
    await client.connect(transport, { timeout: requestTimeout });
    connected = true;
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: requestTimeout });
      serverTools.push(...(page.tools as McpToolInfo[]));
      cursor = page.nextCursor;
    } while (cursor);
  } catch (error) {
    await client.close().catch(() => {});
    throw new McpConnectionError(options.name, messageOf(error), stderr.trim(), error);
  }
  const state = {
    get connected() {
      return connected && !closed;
    },
    get closed() {
      return closed;
    },
  };
  let tools: Tool[];
  try {
    const selected = serverTools.filter((t) => selects(options.tools, t));
    tools = toTroupeTools(options, selected, client, state, requestTimeout);
    if (options.defer === true) tools = deferredTools(options.name, selected.map((info, i) => ({ info, tool: tools[i]! })), options);
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }

  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    connected = false;
    await endSession?.();
    await client.close();
  };
  const version = client.getServerVersion();
  return {
    name: options.name,
    tools,
    serverTools,
    serverInfo: version ? { name: version.name, version: version.version } : undefined,
    instructions: client.getInstructions(),
    client,
    get connected() {
      return state.connected;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function selects(filter: McpCommonOptions['tools'], t: McpToolInfo): boolean {
  if (filter === undefined) return true;
  return typeof filter === 'function' ? filter(t) : filter.includes(t.name);
}

function toTroupeTools(
  options: McpServerOptions,
  serverTools: readonly McpToolInfo[],
  client: Client,
  state: { readonly connected: boolean; readonly closed: boolean },
  requestTimeout: number,
): Tool[] {
  const server = options.name;
  const names = new Map<string, string>();
  return serverTools.map((info) => {
    const name = toolName(server, info.name);
    const clash = names.get(name);
    if (clash !== undefined) {
      throw new UserError(`MCP server '${server}': tools '${clash}' and '${info.name}' both map to the tool name '${name}'.`);
    }
    names.set(name, info.name);
    const approval = options.needsApproval;
    return rawTool({
      name,
      description: info.description || info.title || `Tool '${info.name}' of MCP server '${server}'.`,
      parameters: info.inputSchema ?? { type: 'object', properties: {} },
      validate: options.validate ?? 'check',
      source: `MCP server '${server}'`,
      parallel: options.parallel ?? true,
      retries: options.retries,
      timeoutMs: options.timeoutMs,
      maxOutputChars: options.maxOutputChars,
      needsApproval:
        approval === undefined || typeof approval === 'boolean'
          ? (approval ?? false)
          : Array.isArray(approval)
            ? approval.includes(info.name)
            : (args, ctx) => (approval as Exclude<McpApproval, boolean | readonly string[]>)(info, args, ctx),
      execute: async (args, ctx) => {
        const fail = (message: string, cause?: unknown): ToolError =>
          new ToolError(`MCP server '${server}' failed on tool '${info.name}': ${message}`, { cause });
        if (state.closed) throw fail('the server connection was closed');
        if (!state.connected) throw fail('the server connection is lost');
        let result: Awaited<ReturnType<Client['callTool']>>;
        try {
          result = await client.callTool({ name: info.name, arguments: args }, undefined, {
            signal: ctx.signal,
            timeout: requestTimeout,
            resetTimeoutOnProgress: true,
            onprogress: (progress) => ctx.onUpdate({ server, tool: info.name, ...progress }),
          });
        } catch (error) {
          // Cancellation and timeouts keep their own error (RunCancelled, ToolTimeout).
          if (ctx.signal.aborted && ctx.signal.reason instanceof Error) throw ctx.signal.reason;
          throw fail(messageOf(error), error);
        }
        // Images and blobs keep their parts (text models see their projection); text-only results stay text.
        const parts = contentParts(result as { content?: unknown });
        const content = parts && hasMedia(parts) && result.isError !== true ? parts : renderContent(result);
        const details = { server, tool: info.name, content: result.content, structuredContent: result.structuredContent };
        return toolResult({ content, details, isError: result.isError === true });
      },
    });
  });
}

/** `<server>__<tool>` with characters outside [a-zA-Z0-9_-] replaced by '_'; names over 64 characters are shortened with a hash. */
export function toolName(server: string, tool: string): string {
  const full = `${server}__${tool.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
  if (full.length <= 64) return full;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 8);
  return `${full.slice(0, 55)}_${hash}`;
}

function messageOf(error: unknown): string {
  // A server that throws an McpError sends its prefixed message, and the client prefixes it again.
  if (error instanceof Error) return (error.message || error.name).replace(/^(MCP error -?\d+: )\1/, '$1');
  return typeof error === 'string' ? error : JSON.stringify(error);
}
