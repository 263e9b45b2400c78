import { createConnectWeb } from '../adapters/connect-web/index.js';
import type { AppConfig } from '../config/index.js';
import {
  AccountMcpServer,
  ConnectionBook,
  createConnectionTools,
  SecretBox,
} from '../core/connections/index.js';
import type { Logger } from '../core/contracts/logger.js';
import type { People } from '../core/contracts/people.js';
import type { Store } from '../core/contracts/store.js';
import type { McpServerSettings } from '../core/tools/mcp/index.js';

/**
 * People's connections to OAuth-protected MCP servers: the book of connections, one tool source per such
 * server, `list_connections` / `disconnect`, and the browser pages under BUTLER_PUBLIC_URL. Absent when no
 * server wants OAuth.
 */

const minute = 60_000;

type HttpSettings = McpServerSettings & { transport: { kind: 'http' } };
const isOAuthHttp = (server: McpServerSettings): server is HttpSettings =>
  server.oauth !== undefined && server.transport.kind === 'http';

export function createConnections(config: AppConfig, store: Store, people: People, logger: Logger) {
  const servers = config.mcpServers.filter(isOAuthHttp);
  if (servers.length === 0 || !config.secretKeys || !config.publicUrl) return undefined;
  const book = new ConnectionBook(
    store,
    new SecretBox(config.secretKeys),
    people,
    servers.map((server) => ({
      name: server.name,
      url: server.transport.url,
      oauth: server.oauth ?? { identity: 'person' },
    })),
    {
      publicUrl: config.publicUrl,
      linkTtlMs: 10 * minute,
      // No OAuth request may hold Butler: 15 s and 1 MB each, a Connect page answers within 20 s, and a call
      // whose refresh stalls ends within 30 s (docs/security.md).
      deadlines: { requestMs: 15_000, pageMs: 20_000, refreshMs: 25_000 },
      maxResponseBytes: 1_048_576,
    },
    logger,
  );
  const sources = servers.map((server) => new AccountMcpServer(server, book, logger));
  return {
    book,
    sources,
    tools: createConnectionTools(book),
    routes: createConnectWeb(book, logger, { publicUrl: config.publicUrl }),
    start: () => Promise.all(sources.map((source) => source.start())),
    stop: () => Promise.all(sources.map((source) => source.stop())),
    describe: () => Object.fromEntries(sources.map((source) => [source.name, source.describe()])),
  };
}

export type Connections = NonNullable<ReturnType<typeof createConnections>>;
