import { createConnectWeb } from '../adapters/connect-web/index.js';
import type { AppConfig, FeishuConfig } from '../config/index.js';
import {
  AccountMcpServer,
  ConnectionBook,
  clientMetadataUrlOf,
  createConnectionTools,
  type OAuthServer,
  SecretBox,
} from '../core/connections/index.js';
import type { Logger } from '../core/contracts/logger.js';
import type { People } from '../core/contracts/people.js';
import type { Store } from '../core/contracts/store.js';
import { feishuSearchConnection } from '../core/search/index.js';
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
  const feishu = config.search.feishu;
  const { publicUrl } = config;
  if ((servers.length === 0 && !feishu) || !config.secretKeys || !publicUrl) return undefined;
  const book = new ConnectionBook(
    store,
    new SecretBox(config.secretKeys),
    people,
    [
      ...servers.map((server) => {
        const oauth = server.oauth ?? { identity: 'person' as const };
        // Butler's own metadata document, unless the server names another or none (`false`).
        const ownDocument = clientMetadataUrlOf(publicUrl);
        return {
          name: server.name,
          url: server.transport.url,
          oauth:
            oauth.clientMetadataUrl === undefined && ownDocument
              ? { ...oauth, clientMetadataUrl: ownDocument }
              : oauth,
        };
      }),
      ...(feishu ? [feishuSearchServer(feishu)] : []),
    ],
    {
      publicUrl,
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
    routes: createConnectWeb(book, logger, { publicUrl }),
    start: () => Promise.all(sources.map((source) => source.start())),
    stop: () => Promise.all(sources.map((source) => source.stop())),
    describe: () => Object.fromEntries(sources.map((source) => [source.name, source.describe()])),
  };
}

export type Connections = NonNullable<ReturnType<typeof createConnections>>;

/**
 * Feishu's user OAuth, for searching as the asker (Feishu: "Get user_access_token", v2): the authorization page
 * on the accounts host (a private deployment or stand-in serves it on its own base URL), the token endpoint
 * with a JSON body, and the scopes search needs (`offline_access` for a refresh token). Codes 20026, 20037,
 * 20064 and 20073 say a refresh token is spent, revoked or expired.
 */
function feishuSearchServer(app: FeishuConfig): OAuthServer {
  const accounts: Record<string, string> = {
    'https://open.feishu.cn': 'https://accounts.feishu.cn',
    'https://open.larksuite.com': 'https://accounts.larksuite.com',
  };
  return {
    name: feishuSearchConnection,
    url: app.baseUrl,
    oauth: {
      identity: 'person',
      clientId: app.appId,
      clientSecret: app.appSecret,
      scopes: ['search:message', 'im:message:readonly', 'offline_access'],
    },
    fixed: {
      authorizationUrl: `${accounts[app.baseUrl] ?? app.baseUrl}/open-apis/authen/v1/authorize`,
      tokenUrl: `${app.baseUrl}/open-apis/authen/v2/oauth/token`,
      refusedCodes: [20026, 20037, 20064, 20073],
    },
  };
}
