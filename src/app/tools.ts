import { type AppConfig, enabledPlatforms, missingApprovers } from '../config/index.js';
import type { ConfigIssue } from '../core/contracts/errors.js';
import type { Logger } from '../core/contracts/logger.js';
import type { People } from '../core/contracts/people.js';
import type { Store } from '../core/contracts/store.js';
import { createAttachFileTool } from '../core/files/index.js';
import { type BearerTokens, createHttpTool } from '../core/tools/http-tool.js';
import { McpServerGroup } from '../core/tools/mcp/server-group.js';
import { createMemoryTools } from '../core/tools/memory-tools.js';
import { includeFilter } from '../core/tools/name-patterns.js';
import { ToolRegistry, type ToolSource } from '../core/tools/registry.js';
import type { Tool } from '../core/tools/tool.js';

/**
 * Butler's tools: memories, the config file's HTTP tools and the MCP servers' tools, and what their lists
 * break (name clashes, high-risk tools nobody may approve), which stops a start and is logged when a server
 * connects later.
 */
export function createTools(
  config: AppConfig,
  store: Store,
  people: People,
  logger: Logger,
  builtin: readonly Tool[] = [],
  /** Servers reached on people's own connections (`app/connections.ts`), beside the supervised ones. */
  accountServers: readonly ToolSource[] = [],
  /** Connections' tokens, for HTTP tools whose calls act with one. */
  bearer?: BearerTokens,
) {
  const { file } = config;
  const toolList = [
    ...createMemoryTools(store.memories, people),
    createAttachFileTool(),
    ...builtin,
    ...file.tools.map((tool) => createHttpTool(tool, bearer)),
  ];
  const mcp = new McpServerGroup(
    config.mcpServers.filter((server) => !server.oauth),
    logger,
  );
  const tools = new ToolRegistry(toolList, [...mcp.servers, ...accountServers], logger);
  /** What the tool lists known so far break: name clashes, high-risk tools nobody may approve, profile typos. */
  const toolProblems = (): ConfigIssue[] => [
    ...profilePatternProblems(config, tools),
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

/**
 * A channel profile's tool pattern that can offer nothing is a typo: a name or glob that matches none of
 * Butler's own and HTTP tools, or an MCP pattern (`server__…`) naming a server that is not configured. MCP
 * tools themselves are not required to exist: their server may connect later.
 */
function profilePatternProblems(config: AppConfig, tools: ToolRegistry): ConfigIssue[] {
  const servers = new Set(config.mcpServers.map((server) => server.name));
  const local = tools
    .all()
    .filter((tool) => tool.origin?.kind !== 'mcp')
    .map((tool) => tool.name);
  return config.channels.flatMap((profile, index) =>
    (profile.tools ?? []).flatMap((pattern) => {
      const [server] = pattern.split('__');
      const mcp = pattern.includes('__');
      const fine = mcp
        ? server === undefined || server.includes('*') || servers.has(server)
        : pattern === 'delegate' || local.some(includeFilter([pattern]));
      if (fine) return [];
      return [
        {
          variable: `config file: channels.${index}.tools`,
          message: mcp
            ? `"${pattern}" names the MCP server ${server}, which is not configured`
            : `"${pattern}" matches none of Butler's tools (MCP tools are named server__tool)`,
        },
      ];
    }),
  );
}
