import { type AppConfig, enabledPlatforms, missingApprovers } from '../config/index.js';
import type { ConfigIssue } from '../core/contracts/errors.js';
import type { Logger } from '../core/contracts/logger.js';
import type { Store } from '../core/contracts/store.js';
import { createAttachFileTool } from '../core/files/index.js';
import { createHttpTool } from '../core/tools/http-tool.js';
import { McpServerGroup } from '../core/tools/mcp/server-group.js';
import { createMemoryTools } from '../core/tools/memory-tools.js';
import { ToolRegistry } from '../core/tools/registry.js';
import type { Tool } from '../core/tools/tool.js';

/**
 * Butler's tools: memories, the config file's HTTP tools and the MCP servers' tools, and what their lists
 * break (name clashes, high-risk tools nobody may approve), which stops a start and is logged when a server
 * connects later.
 */
export function createTools(config: AppConfig, store: Store, logger: Logger, builtin: readonly Tool[] = []) {
  const { file } = config;
  const toolList = [
    ...createMemoryTools(store.memories),
    createAttachFileTool(),
    ...builtin,
    ...file.tools.map(createHttpTool),
  ];
  const mcp = new McpServerGroup(config.mcpServers, logger);
  const tools = new ToolRegistry(toolList, mcp.servers, logger);
  /** What the tool lists known so far break: name clashes, high-risk tools nobody may approve. */
  const toolProblems = (): ConfigIssue[] => [
    ...tools.clashes().map((clash) => ({
      variable: 'config file: mcpServers',
      message: `${clash.kept} and ${clash.dropped} would both be named ${clash.name}`,
    })),
    ...missingApprovers(
      file,
      enabledPlatforms(config),
      mcp
        .tools()
        .filter((tool) => tool.risk === 'high')
        .map((tool) => tool.name),
    ),
  ];
  // A server that connects after start-up (or changes its list) cannot stop Butler: say what is wrong.
  const reportedProblems = new Set<string>();
  for (const server of mcp.servers)
    server.onToolsChanged(() => {
      for (const problem of toolProblems()) {
        if (reportedProblems.has(problem.message)) continue;
        reportedProblems.add(problem.message);
        logger.error({ mcpServer: server.name, variable: problem.variable }, problem.message);
      }
    });
  return { tools, mcp, toolProblems };
}
