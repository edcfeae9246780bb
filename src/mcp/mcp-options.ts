/** The options every MCP server takes and the tool listing they refer to (shared by mcp.ts and deferred-tools.ts). */
import type { RunContext } from '../tools/context.js';
import type { JsonSchema } from '../tools/schema.js';

/** A tool as the MCP server lists it. */
export interface McpToolInfo {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
  readonly annotations?: { readonly readOnlyHint?: boolean; readonly destructiveHint?: boolean; readonly [key: string]: unknown };
}

export type McpApproval =
  | boolean
  /** Names (as the server calls them) of the tools that need approval. */
  | readonly string[]
  | ((tool: McpToolInfo, args: Record<string, unknown>, ctx: RunContext<any>) => boolean | Promise<boolean>);

export interface McpCommonOptions {
  /** Prefix of every tool name (`<name>__<tool>`) and the server's name in errors: 1-32 of a-z, A-Z, 0-9, '_', '-'. */
  name: string;
  /** Which tools to expose (server-side names, or a predicate). Default: all. */
  tools?: readonly string[] | ((tool: McpToolInfo) => boolean);
  needsApproval?: McpApproval;
  /** Tool options applied to every tool of the server (see `tool()`). */
  retries?: number;
  timeoutMs?: number;
  maxOutputChars?: number | null;
  /** false makes every call of this server a barrier. Default true. */
  parallel?: boolean;
  /** "check" (default) checks arguments against the tool's JSON Schema before calling; "none" leaves it to the server. */
  validate?: 'check' | 'none';
  /** Protocol timeout per request (connect, list, call) when `timeoutMs` is not longer. Default 60,000. */
  requestTimeoutMs?: number;
  /**
   * true: `tools` is `search_mcp_tools` and `call_mcp_tool` instead of one tool per server
   * tool, for servers with many tools. The inner tool's schema validation, approval rule
   * (it sees the inner tool and arguments), retries and timeout still apply. One deferred
   * server per agent (the two names are fixed). Default false.
   */
  defer?: boolean;
}

