import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express, { type RequestHandler } from 'express';
import { z } from 'zod';
import {
  type OAuthMcpStats,
  type PreRegisteredClient,
  TestAuthorizationServer,
  testAccountHeader,
} from './oauth-mcp-provider.js';

export type { OAuthMcpStats, PreRegisteredClient } from './oauth-mcp-provider.js';
export { testAccountHeader };

/**
 * An OAuth 2.1 authorization server and the MCP server it protects, on one local port, built from the official
 * SDK's server side: what Butler's per-person OAuth connections are tested against. Nobody types a password:
 * the test says who is logged in to the provider, and opening the authorization URL with
 * `fetch(url, { redirect: 'manual' })` answers with the 302 to the redirect URI.
 */

export interface OAuthMcpServerOptions {
  /** `false` removes the registration endpoint; clients must then be pre-registered. Default `true`. */
  dynamicRegistration?: boolean;
  preRegisteredClient?: PreRegisteredClient;
  /** Default 3600. */
  accessTokenTtlSeconds?: number;
  /** Holds every token response this long, after the tokens are issued. */
  slowTokenEndpointMs?: number;
  /**
   * Takes Client ID Metadata Documents (its metadata says `client_id_metadata_document_supported`), fetching
   * each with this; absent: it does not.
   */
  fetchClientMetadata?: (url: string) => Promise<unknown>;
}

export interface Ticket {
  number: number;
  account: string;
  title: string;
}

export interface OAuthToolCall {
  tool: string;
  /** Whose token made the call. */
  account: string;
  arguments: Record<string, unknown>;
}

export interface OAuthMcpServer {
  /** The MCP endpoint (Streamable HTTP, stateless), and the only resource indicator the server accepts. */
  url: string;
  /** The authorization server's issuer, as the SDK writes it (the origin with a trailing slash). */
  issuer: string;
  /** RFC 9728 metadata of `url`, as named in `WWW-Authenticate` on every 401. */
  resourceMetadataUrl: string;
  /** Logs `account` in to the provider: authorization requests from now on are approved as this account. */
  login(account: string): void;
  /** Nobody is logged in: authorization requests without the `testAccountHeader` get `access_denied`. */
  logout(): void;
  /** The next authorization request is declined with `access_denied`. */
  denyNext(): void;
  /** Every access token issued so far is expired now; the next MCP request with one gets 401. */
  expireAccessTokens(): void;
  /** Holds every token response this long from now on (0: answers at once). */
  delayTokenResponses(ms: number): void;
  /** Every access and refresh token issued so far. */
  issuedTokens(): string[];
  stats(): OAuthMcpStats;
  tickets(): Ticket[];
  calls(): OAuthToolCall[];
  close(): Promise<void>;
}

function text(value: string) {
  return { content: [{ type: 'text' as const, text: value }] };
}

/** The account the request's access token belongs to, as `verifyAccessToken` reported it. */
function accountOf(extra: { authInfo?: { extra?: Record<string, unknown> } }): string {
  const account = extra.authInfo?.extra?.account;
  if (typeof account !== 'string') throw new Error('the request carries no verified account');
  return account;
}

/** A small ticket tracker, one instance per request (the MCP endpoint is stateless). */
function createTrackerServer(tickets: Ticket[], calls: OAuthToolCall[]): McpServer {
  const server = new McpServer({ name: 'butler-oauth-test-server', version: '1.0.0' });
  server.registerTool(
    'whoami',
    { description: 'The account this connection acts as.', annotations: { readOnlyHint: true } },
    async (extra) => {
      const account = accountOf(extra);
      calls.push({ tool: 'whoami', account, arguments: {} });
      return text(account);
    },
  );
  server.registerTool(
    'create_ticket',
    {
      description: 'Creates a ticket.',
      inputSchema: { title: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    async (args, extra) => {
      const account = accountOf(extra);
      calls.push({ tool: 'create_ticket', account, arguments: args });
      const ticket = { number: tickets.length + 1, account, title: args.title };
      tickets.push(ticket);
      return text(`created ticket #${ticket.number} for ${account}`);
    },
  );
  server.registerTool(
    'list_tickets',
    { description: "The caller's tickets.", annotations: { readOnlyHint: true } },
    async (extra) => {
      const account = accountOf(extra);
      calls.push({ tool: 'list_tickets', account, arguments: {} });
      const own = tickets.filter((ticket) => ticket.account === account);
      return text(JSON.stringify(own.map(({ number, title }) => ({ number, title }))));
    },
  );
  return server;
}

/**
 * Notes why each refused request was refused, from the OAuth error it was answered with: a JSON body
 * (`{ error, error_description }`) or a redirect carrying `error`. JSON-RPC errors are not OAuth refusals.
 */
function recordRefusals(rejected: string[]): RequestHandler {
  return (request, response, next) => {
    // Read now: the SDK's nested routers rewrite the path while they handle the request.
    const path = request.path;
    const note = (error: unknown, description: unknown) =>
      rejected.push(`${path} ${String(error)}: ${String(description ?? '')}`);
    const sendJson = response.json.bind(response);
    response.json = (body: unknown) => {
      const oauthError = typeof body === 'object' && body !== null && 'error' in body;
      if (response.statusCode >= 400 && oauthError && typeof body.error === 'string') {
        note(body.error, 'error_description' in body ? body.error_description : undefined);
      }
      return sendJson(body);
    };
    response.on('finish', () => {
      const location = response.getHeader('location');
      if (response.statusCode !== 302 || typeof location !== 'string') return;
      const parameters = new URL(location).searchParams;
      if (parameters.has('error')) note(parameters.get('error'), parameters.get('error_description'));
    });
    next();
  };
}

/**
 * The SDK leaves `state` out of the error redirect for an authorization request it cannot parse (a `plain` or
 * missing PKCE challenge); RFC 6749 §4.1.2.1 wants it echoed, and hosted providers echo it.
 */
function echoStateInErrorRedirects(): RequestHandler {
  return (request, response, next) => {
    const redirect = response.redirect.bind(response) as (status: number, url: string) => void;
    response.redirect = (...args: [string] | [number, string]) => {
      const [status, location] = args.length === 1 ? [302, args[0]] : args;
      const target = new URL(location);
      const parameters: unknown = request.method === 'POST' ? request.body : request.query;
      const stateGiven = typeof parameters === 'object' && parameters !== null && 'state' in parameters;
      if (target.searchParams.has('error') && !target.searchParams.has('state') && stateGiven) {
        target.searchParams.set('state', String(parameters.state));
      }
      redirect(status, target.href);
    };
    next();
  };
}

export async function startOAuthMcpServer(options: OAuthMcpServerOptions = {}): Promise<OAuthMcpServer> {
  // The issuer and the resource name the port, so the app is built once the server listens.
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const mcpUrl = new URL('/mcp', origin);
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(mcpUrl);
  const provider = new TestAuthorizationServer({
    resource: mcpUrl.href,
    accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? 3600,
    dynamicRegistration: options.dynamicRegistration ?? true,
    preRegisteredClient: options.preRegisteredClient,
    slowTokenEndpointMs: options.slowTokenEndpointMs ?? 0,
    fetchClientMetadata: options.fetchClientMetadata,
  });
  const tickets: Ticket[] = [];
  const calls: OAuthToolCall[] = [];

  const app = express();
  app.use(recordRefusals(provider.stats.rejected));
  app.use('/authorize', echoStateInErrorRedirects());
  if (options.fetchClientMetadata)
    app.use('/.well-known/oauth-authorization-server', advertiseClientMetadata());
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(origin),
      resourceServerUrl: mcpUrl,
      resourceName: 'Butler OAuth test tracker',
      // Tests register and refresh far more often than the SDK's default limits allow.
      authorizationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
      revocationOptions: { rateLimit: false },
    }),
  );
  const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl, expectedResource: mcpUrl });
  app.post('/mcp', bearer, async (request, response) => {
    const server = createTrackerServer(tickets, calls);
    // No session id generator: stateless, so a reconnecting client needs nothing the server could have lost.
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  });
  // A plain HTTP API of the same resource (for HTTP tools that use a connection): whose token this is.
  app.get('/mcp/me', bearer, (request, response) => {
    const { auth } = request as { auth?: { extra?: Record<string, unknown> } };
    const account = accountOf(auth ? { authInfo: auth } : {});
    calls.push({ tool: 'http:me', account, arguments: {} });
    response.json({ account });
  });
  // Stateless: no server-sent stream to open with GET, no session to end with DELETE (the client expects 405).
  app.all('/mcp', bearer, (_request, response) => {
    response.status(405).set('allow', 'POST').end();
  });
  http.on('request', app);

  return {
    url: mcpUrl.href,
    issuer: new URL(origin).href,
    resourceMetadataUrl,
    login: (account) => {
      provider.loggedIn = account;
    },
    logout: () => {
      provider.loggedIn = undefined;
    },
    denyNext: () => {
      provider.denyNext = true;
    },
    expireAccessTokens: () => provider.expireAccessTokens(),
    delayTokenResponses: (ms) => {
      provider.settings.slowTokenEndpointMs = ms;
    },
    issuedTokens: () => provider.issuedTokens(),
    stats: () => ({ ...provider.stats, rejected: [...provider.stats.rejected] }),
    tickets: () => [...tickets],
    calls: () => [...calls],
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Adds `client_id_metadata_document_supported: true` to the SDK's authorization server metadata. */
function advertiseClientMetadata(): RequestHandler {
  return (_request, response, next) => {
    const json = response.json.bind(response);
    response.json = (body: unknown) =>
      json({ ...(body as Record<string, unknown>), client_id_metadata_document_supported: true });
    next();
  };
}
