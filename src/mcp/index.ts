export {
  mcp,
  McpConnectionError,
  toolName as mcpToolName,
  renderContent as renderMcpContent,
  type McpServer,
  type McpServerOptions,
  type McpStdioOptions,
  type McpHttpOptions,
  type McpCommonOptions,
  type McpToolInfo,
  type McpApproval,
} from './mcp.js';
