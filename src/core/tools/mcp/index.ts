export type { McpTransportKind } from './mcp-connection.js';
export { McpConnectionError, McpToolCallError, type McpToolCallErrorCode } from './mcp-errors.js';
export {
  McpServer,
  type McpServerOptions,
  type McpServerState,
  type McpServerStatus,
  type ToolsListener,
} from './mcp-server.js';
export { type McpServerSettings, type McpTransportSettings, mcpSettingDefaults } from './mcp-settings.js';
export { createMcpTool, type McpToolCaller, type McpToolDefinition } from './mcp-tool.js';
export { createRedactor } from './redact.js';
export {
  argumentValidator,
  summarizeArguments,
  type ToolArguments,
  toModelParameters,
} from './tool-arguments.js';
export { mcpToolName, toolNamePattern } from './tool-name.js';
export { formatToolResult, type McpCallResult, type McpContent, truncateResult } from './tool-result.js';
export { type McpToolAnnotations, mcpToolRisk } from './tool-risk.js';
