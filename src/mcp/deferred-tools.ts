/**
 * Deferred MCP tools (`mcp({ …, defer: true })`): instead of every tool schema, the model
 * gets `search_mcp_tools` (keywords → names, descriptions and schemas) and `call_mcp_tool`
 * (name + arguments). The inner tool keeps everything it would have had on its own: its
 * arguments are validated against its schema in preflight, its approval predicate sees
 * its own name and arguments, and the server's retries and timeouts wrap its call.
 */
import { z } from 'zod';
import { InvalidToolArguments } from '../errors.js';
import type { RunContext } from '../tools/context.js';
import { rawTool } from '../tools/raw-tool.js';
import { isObject } from '../tools/schema.js';
import type { Tool } from '../tools/tool.js';
import { validateArguments } from '../tools/validate.js';
import type { McpCommonOptions, McpToolInfo } from './mcp-options.js';

export const SEARCH_TOOL = 'search_mcp_tools';
export const CALL_TOOL = 'call_mcp_tool';
const DEFAULT_LIMIT = 5;
const NAMES_SHOWN = 20;

/** One tool of the server: as listed, and as the troupe tool that calls it. */
export interface DeferredEntry {
  readonly info: McpToolInfo;
  readonly tool: Tool;
}

/** What `call_mcp_tool` receives once preflight validated it: the inner tool's troupe name and its validated arguments. */
export interface InnerCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/** The two tools that stand in for `entries`. */
export function deferredTools(server: string, entries: readonly DeferredEntry[], options: McpCommonOptions): Tool[] {
  const byName = new Map<string, DeferredEntry>();
  for (const entry of entries) {
    byName.set(entry.tool.name, entry);
    // The server's own name works too (the first tool wins if two map to one name).
    if (!byName.has(entry.info.name)) byName.set(entry.info.name, entry);
  }
  return [searchTool(server, entries), callTool(server, entries, byName, options)];
}

function searchTool(server: string, entries: readonly DeferredEntry[]): Tool {
  return rawTool({
    name: SEARCH_TOOL,
    description: `Search the ${entries.length} tools of MCP server '${server}' by keywords (an empty query lists them). Returns each match's name, description and inputSchema; run one with ${CALL_TOOL}.`,
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Keywords, e.g. "create issue".' },
        limit: { type: 'integer', minimum: 1, maximum: 50, description: `Most results to return (default ${DEFAULT_LIMIT}).` },
      },
      required: ['query'],
      additionalProperties: false,
    },
    source: `MCP server '${server}'`,
    execute: (args) => search(server, entries, String(args.query), typeof args.limit === 'number' ? args.limit : DEFAULT_LIMIT),
  });
}

/**
 * The matching tools as JSON text, best first: every query word found in a tool's name
 * counts 2, in its title or description 1; ties keep the server's order.
 */
export function search(server: string, entries: readonly DeferredEntry[], query: string, limit: number): string {
  const words = query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== '');
  const scored = entries
    .map((entry, index) => ({ entry, index, score: words.length === 0 ? 1 : score(entry, words) }))
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index);
  if (scored.length === 0) {
    return `No tool of MCP server '${server}' matches ${JSON.stringify(query)}. Its tools: ${namesOf(entries)}.`;
  }
  const tools = scored.slice(0, limit).map(({ entry }) => ({ name: entry.tool.name, description: entry.tool.description, inputSchema: entry.tool.jsonSchema }));
  return JSON.stringify({ tools, matches: scored.length });
}

function score(entry: DeferredEntry, words: readonly string[]): number {
  const name = `${entry.info.name} ${entry.tool.name}`.toLowerCase();
  const text = `${entry.info.title ?? ''} ${entry.info.description ?? ''}`.toLowerCase();
  let total = 0;
  for (const word of words) total += (name.includes(word) ? 2 : 0) + (text.includes(word) ? 1 : 0);
  return total;
}

function namesOf(entries: readonly DeferredEntry[]): string {
  const names = entries.slice(0, NAMES_SHOWN).map((e) => e.tool.name);
  return entries.length > NAMES_SHOWN ? `${names.join(', ')} and ${entries.length - NAMES_SHOWN} more` : names.join(', ') || '(none)';
}

function callTool(server: string, entries: readonly DeferredEntry[], byName: ReadonlyMap<string, DeferredEntry>, options: McpCommonOptions): Tool {
  const base = rawTool({
    name: CALL_TOOL,
    description: `Run a tool of MCP server '${server}' by name (find it with ${SEARCH_TOOL}) with arguments that match its inputSchema.`,
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', description: `The tool's name as ${SEARCH_TOOL} gives it.` },
        arguments: { type: 'object', description: "The tool's arguments, matching its inputSchema." },
      },
      required: ['name'],
      additionalProperties: false,
    },
    source: `MCP server '${server}'`,
    parallel: options.parallel ?? true,
    retries: options.retries,
    timeoutMs: options.timeoutMs,
    maxOutputChars: options.maxOutputChars,
    needsApproval: entries.some((e) => e.tool.needsApproval !== false) ? (args, ctx) => innerApproval(byName, args as unknown as InnerCall, ctx) : false,
    execute: (args, ctx) => byName.get((args as unknown as InnerCall).name)!.tool.execute(args.arguments, ctx),
  });
  // Preflight runs this schema: it finds the inner tool and validates the inner arguments against its schema.
  return { ...base, parameters: innerCallSchema(server, entries, byName) };
}

/** The inner tool's own approval rule, applied to the inner arguments. */
function innerApproval(byName: ReadonlyMap<string, DeferredEntry>, args: InnerCall, ctx: RunContext<any>): boolean | Promise<boolean> {
  const rule = byName.get(args.name)!.tool.needsApproval;
  return typeof rule === 'function' ? rule(args.arguments, ctx) : rule;
}

/** Validates `{ name, arguments }` against the inner tool; the output is an `InnerCall` under the tool's troupe name. */
function innerCallSchema(server: string, entries: readonly DeferredEntry[], byName: ReadonlyMap<string, DeferredEntry>): z.ZodType {
  return z.unknown().transform((value, ctx): InnerCall => {
    const fail = (message: string, path: Array<string | number>): never => {
      ctx.addIssue({ code: 'custom', message, path });
      return z.NEVER as never;
    };
    if (!isObject(value)) return fail('expected an object with name and arguments', []);
    for (const key of Object.keys(value)) if (key !== 'name' && key !== 'arguments') return fail('unexpected property', [key]);
    const name = value.name;
    if (typeof name !== 'string') return fail(`expected a tool name (string), received ${name === undefined ? 'nothing' : typeof name}`, ['name']);
    const entry = byName.get(name);
    if (!entry) return fail(`MCP server '${server}' has no tool '${name}'; find tools with ${SEARCH_TOOL} (its tools: ${namesOf(entries)})`, ['name']);
    const inner = value.arguments ?? {};
    if (!isObject(inner)) return fail(`expected an object of arguments for '${entry.tool.name}'`, ['arguments']);
    try {
      return { name: entry.tool.name, arguments: validateArguments(entry.tool, inner) as Record<string, unknown> };
    } catch (error) {
      if (!(error instanceof InvalidToolArguments)) throw error;
      for (const issue of error.issues) ctx.addIssue({ code: 'custom', message: `${issue.message} (tool '${entry.tool.name}')`, path: issue.path === '(root)' ? ['arguments'] : ['arguments', ...issue.path.split('.')] });
      return z.NEVER as never;
    }
  });
}
