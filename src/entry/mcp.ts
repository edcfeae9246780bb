/** `troupe/mcp`: tools from Model Context Protocol servers (the SDK loads on first connect). */
export * from '../mcp/index.js';
