import type { Logger } from '../../contracts/logger.js';
import type { Tool } from '../tool.js';
import { McpServer, type McpServerOptions } from './mcp-server.js';
import type { McpServerSettings } from './mcp-settings.js';

/**
 * Every configured MCP server, started together: start-up waits at most the slowest server's connect
 * timeout, and a server that fails is left down and retrying, never stopping Butler.
 */
export class McpServerGroup {
  readonly servers: readonly McpServer[];

  constructor(settings: readonly McpServerSettings[], logger: Logger, options: McpServerOptions = {}) {
    this.servers = settings.map((server) => new McpServer(server, logger, options));
  }

  async start(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.stop()));
  }

  /** Every tool offered right now. */
  tools(): Tool[] {
    return this.servers.flatMap((server) => [...server.tools()]);
  }

  /** Each server's state in words, for /readyz and the start-up banner. */
  describe(): Record<string, string> {
    return Object.fromEntries(
      this.servers.map((server) => {
        const status = server.status();
        if (status.state === 'connected') {
          const revision = status.protocolVersion ? ` (MCP ${status.protocolVersion})` : '';
          return [server.name, `connected${revision}, ${status.tools} tools`];
        }
        const why = status.error ? ` (${status.error})` : '';
        return [server.name, `degraded: ${status.state}${why}; its tools are left out until it is back`];
      }),
    );
  }
}
