import { createAdminConsole } from '../adapters/admin-console/index.js';
import type { createApi } from '../adapters/api/index.js';
import type { PlatformConnector } from '../adapters/connector.js';
import type { AppConfig } from '../config/index.js';
import type { Logger } from '../core/contracts/logger.js';
import type { McpServerGroup } from '../core/tools/mcp/server-group.js';
import { createHttpServer, type HttpServer, type RouteHandler } from '../http/server.js';
import type { Metrics } from '../observability/metrics.js';
import { type OpenDatabase, poolerNote } from '../storage/database.js';
import type { Connections } from './connections.js';

/** /readyz answers within about this long even when the database hangs. */
const readinessPingMs = 1000;

/**
 * The one HTTP server: the platforms' webhook routes, the API and the admin console under their prefixes,
 * `/metrics` when it is on, and `/readyz` from the database, the worker and each connector (a down MCP server degrades, not unreadies).
 */
export function createServer(
  config: AppConfig,
  parts: {
    logger: Logger;
    connectors: readonly PlatformConnector[];
    api: ReturnType<typeof createApi> | undefined;
    database: OpenDatabase;
    mcp: McpServerGroup;
    /** People's connections: the browser pages under the public URL, and each OAuth server's state. */
    connections: Connections | undefined;
    metrics: Metrics | undefined;
    workerState: () => string;
  },
): HttpServer {
  const { connectors, database, mcp, connections } = parts;
  const routes = new Map<string, RouteHandler>();
  for (const connector of connectors)
    for (const [path, handler] of connector.routes) routes.set(path, handler);
  return createHttpServer({
    port: config.port,
    logger: parts.logger,
    routes,
    limits: config.file.http,
    prefixRoutes: new Map([
      ...(parts.api?.prefixRoutes ?? []),
      ...createAdminConsole().prefixRoutes,
      ...(connections?.routes ?? []),
      ...connectors.flatMap((connector) => [...(connector.pages ?? [])]),
    ]),
    metrics: parts.metrics?.render,
    readiness: async () => {
      const checks: Record<string, string> = { database: 'ok', worker: parts.workerState() };
      try {
        await database.ping(readinessPingMs);
      } catch (error) {
        checks.database = `unreachable: ${error instanceof Error ? error.message : String(error)}`;
      }
      for (const connector of connectors) checks[connector.adapter.platform] = connector.readiness();
      const pooler = poolerNote(database);
      return {
        // `ok`, or `ok (…)` with a detail (Slack's installation count).
        ready: Object.values(checks).every((value) => value === 'ok' || value.startsWith('ok (')),
        checks,
        ...(pooler ? { database: pooler } : {}),
        ...(mcp.servers.length > 0 || connections
          ? { mcp: { ...mcp.describe(), ...connections?.describe() } }
          : {}),
      };
    },
  });
}

/**
 * The terminal chat's one HTTP listener: the Connect pages and the OAuth callback, on loopback only (the chat is
 * one person's, on their machine), so that a Connect link it shows leads somewhere.
 */
export function createConnectPagesServer(
  config: AppConfig,
  connections: Connections,
  logger: Logger,
): HttpServer {
  return createHttpServer({
    port: config.port,
    host: '127.0.0.1',
    logger,
    routes: new Map(),
    limits: config.file.http,
    prefixRoutes: connections.routes,
    readiness: async () => ({ ready: true, checks: { mcp: 'ok' } }),
  });
}
