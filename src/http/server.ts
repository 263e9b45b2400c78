import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ButlerError } from '../core/contracts/errors.js';
import type { Logger } from '../core/contracts/logger.js';
import { type ConnectionLimitSettings, ConnectionLimits } from './connection-limits.js';

/** A handler for one path. It owns the response; throwing a ButlerError maps to its status code. */
export type RouteHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void> | void;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, string>;
  /** MCP servers and their state: informational, a down one does not make Butler unready. */
  mcp?: Record<string, string>;
}

export interface HttpServerOptions {
  port: number;
  host?: string;
  logger: Logger;
  /** Exact paths (no query) to POST handlers, e.g. `/slack/events`. */
  routes: ReadonlyMap<string, RouteHandler>;
  /**
   * Path prefixes (`/api/v1/`, `/console`) to handlers that route methods and sub-paths themselves and
   * may answer for long (server-sent events): no webhook deadline applies.
   */
  prefixRoutes?: ReadonlyMap<string, RouteHandler>;
  readiness: () => Promise<ReadinessReport>;
  /** `GET /metrics` (Prometheus text), when metrics are on. */
  metrics?: (() => Promise<{ contentType: string; body: string }>) | undefined;
  /**
   * A route that has not answered by then gets a 503, so that the platform retries: Slack and Feishu
   * give a webhook 3 s. The handler goes on; what it stores later is deduplicated on the retry.
   */
  routeDeadlineMs?: number;
  /** Deadlines and connection caps; the defaults suit a service facing the internet. */
  limits?: HttpLimits;
}

/**
 * How long a client may take to send a request, and how many sockets it may hold. Node measures both
 * deadlines from the first byte of a request until it is fully received (`headersTimeout`,
 * `requestTimeout`): a response that streams for long (server-sent events) is not cut by them.
 */
export interface HttpLimits extends ConnectionLimitSettings {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** An idle kept-alive socket is closed after this long. */
  keepAliveTimeoutMs: number;
}

export const defaultHttpLimits: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1000,
  maxConnectionsPerAddress: 200,
  reservedConnections: 100,
};

/** Node checks the deadlines on this interval (its default, 30 s, would let a 10 s deadline run to 40 s). */
const deadlineCheckMs = (limits: HttpLimits) =>
  Math.max(10, Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));

/**
 * Inside the platforms' 3 s (platforms.md §2, §9, §11), with room for the network; above how long an
 * approval click waits for its decision to be stored (2.3 s), so a slow decision is acknowledged, not a 503.
 */
export const defaultRouteDeadlineMs = 2500;

const statusByCode: Record<string, number> = {
  verification_failed: 401,
  payload_invalid: 400,
  payload_too_large: 413,
};

/** Answered when API and console requests already hold every place but the reserve kept for webhooks. */
const serverBusy = {
  error: 'server_busy',
  message: 'Too many API requests are in progress; retry after the time in Retry-After.',
};
const busyRetryAfterSeconds = '5';

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return;
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

export interface HttpServer {
  readonly server: Server;
  listen(): Promise<number>;
  /** Stops accepting connections and waits for in-flight requests, at most the request deadline. */
  close(): Promise<void>;
}

export function createHttpServer(options: HttpServerOptions): HttpServer {
  const { logger, routes } = options;
  const limits = options.limits ?? defaultHttpLimits;
  // Two of Node's checks after its own deadlines: where Node closes a socket (answering 408), it goes first.
  const margin = 2 * deadlineCheckMs(limits);
  const connections = new ConnectionLimits(limits, logger, {
    waitingMs: limits.headersTimeoutMs + margin,
    betweenMs: limits.keepAliveTimeoutMs + limits.headersTimeoutMs + margin,
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path === '/healthz') return sendJson(response, 200, { status: 'ok' });
    if (path === '/readyz') {
      const report = await options.readiness();
      return sendJson(response, report.ready ? 200 : 503, report);
    }
    if (path === '/metrics' && options.metrics) {
      const page = await options.metrics();
      response.writeHead(200, { 'content-type': page.contentType });
      response.end(page.body);
      return;
    }
    for (const [prefix, handler] of options.prefixRoutes ?? []) {
      if (path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`)) {
        const release = connections.takeApiPlace();
        if (!release) {
          response.setHeader('retry-after', busyRetryAfterSeconds);
          return sendJson(response, 503, serverBusy);
        }
        response.once('close', release);
        return await handler(request, response);
      }
    }
    const route = routes.get(path);
    if (!route) return sendJson(response, 404, { error: 'not_found' });
    if (request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      return sendJson(response, 405, { error: 'method_not_allowed' });
    }
    const deadline = setTimeout(() => {
      if (response.headersSent) return;
      logger.warn({ path }, 'request not answered in time (is the database reachable?); answering 503');
      response.setHeader('retry-after', '5');
      sendJson(response, 503, { error: 'timeout' });
    }, options.routeDeadlineMs ?? defaultRouteDeadlineMs);
    try {
      await route(request, response);
    } finally {
      clearTimeout(deadline);
    }
  }

  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: deadlineCheckMs(limits),
    },
    (request, response) => {
      connections.requestStarted(request.socket, (done) => response.once('close', done));
      handle(request, response).catch((error: unknown) => answerFailure(request, response, error));
    },
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.on('connection', (socket) => connections.admit(socket));

  function answerFailure(request: IncomingMessage, response: ServerResponse, error: unknown): void {
    if (error instanceof ButlerError && error.code === 'request_aborted') {
      // The client left, or Node cut a request that missed its deadline (it answered 408 itself).
      logger.debug({ path: request.url }, error.message);
      return;
    }
    const status = error instanceof ButlerError ? statusByCode[error.code] : undefined;
    if (status) {
      logger.warn({ path: request.url, code: (error as ButlerError).code }, (error as Error).message);
      sendJson(response, status, { error: (error as ButlerError).code });
      return;
    }
    logger.error({ err: error, path: request.url }, 'request failed');
    sendJson(response, 500, { error: 'internal_error' });
  }

  return {
    server,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, options.host, () => {
          server.off('error', reject);
          connections.startDeadlines(deadlineCheckMs(limits));
          resolve((server.address() as AddressInfo).port);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        // Node stops checking its deadlines once closing: a stalled client would hold the close for good.
        const cutOff = setTimeout(() => server.closeAllConnections(), limits.requestTimeoutMs);
        server.close(() => {
          clearTimeout(cutOff);
          resolve();
        });
        server.closeIdleConnections();
        connections.closeIdle();
        connections.stopDeadlines();
      }),
  };
}
