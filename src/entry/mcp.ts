/**
 * `troupe/mcp`: tools from Model Context Protocol servers. The SDK (`@modelcontextprotocol/sdk`,
 * an optional peer) loads on first connect; importing this entry checks that it is installed.
 * @throws UserError on import when `@modelcontextprotocol/sdk` is not installed.
 */
import { assertPeerInstalled } from '../peers.js';

assertPeerInstalled('@modelcontextprotocol/sdk', 'troupe/mcp', '@modelcontextprotocol/sdk/client/index.js');

export * from '../mcp/index.js';
