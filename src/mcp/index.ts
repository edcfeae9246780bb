export {
  mcp,
  McpConnectionError,
  toolName as mcpToolName,
  type McpServer,
  type McpServerOptions,
  type McpStdioOptions,
  type McpHttpOptions,
  type McpCommonOptions,
  type McpToolInfo,
  type McpApproval,
} from './mcp.js';
export { renderContent as renderMcpContent, contentParts as mcpContentParts } from './mcp-content.js';
export { mcpPlugin } from './mcp-plugin.js';
