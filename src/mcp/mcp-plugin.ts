import type { Plugin } from '../plugins/plugin.js';
import { mcp, type McpServerOptions } from './mcp.js';

/**
 * An MCP server as a plugin: give it to an agent (`plugins: [mcpPlugin({ name: 'fs', command, args })]`)
 * and the server connects when that agent becomes active in a run (at the start, or when a
 * handoff reaches it), its tools (`<name>__<tool>`) and its instructions join the agent, and
 * the connection closes when the run ends. Each run has its own connection. A server that
 * cannot connect fails the run with a PluginError naming the plugin (its cause is the
 * McpConnectionError). The plugin's name is the server's name.
 */
export function mcpPlugin(options: McpServerOptions): Plugin {
  return {
    name: options.name,
    async setup() {
      const server = await mcp(options);
      return { tools: server.tools, ...(server.instructions ? { instructions: server.instructions } : {}), close: () => server.close() };
    },
  };
}
