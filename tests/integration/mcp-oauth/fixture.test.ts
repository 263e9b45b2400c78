import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryOAuthClient, openAuthorization, redirectUrl } from '../../helpers/oauth-mcp-client.js';
import {
  type OAuthMcpServer,
  type OAuthMcpServerOptions,
  startOAuthMcpServer,
} from '../../helpers/oauth-mcp-server.js';

// The OAuth MCP fixture, driven with the SDK's client the way Butler's per-person connections will drive it.

let server: OAuthMcpServer;

async function start(options: OAuthMcpServerOptions = {}): Promise<OAuthMcpServer> {
  server = await startOAuthMcpServer(options);
  return server;
}

afterEach(async () => {
  await server.close();
});

/** Registers, authorizes (as whoever is logged in) and exchanges the code: the whole first connection. */
async function connectPerson(client: MemoryOAuthClient): Promise<void> {
  expect(await auth(client, { serverUrl: server.url })).toBe('REDIRECT');
  const code = (await openAuthorization(requireUrl(client))).searchParams.get('code') ?? '';
  expect(await auth(client, { serverUrl: server.url, authorizationCode: code })).toBe('AUTHORIZED');
}

function requireUrl(client: MemoryOAuthClient): URL {
  if (client.authorizationUrl === undefined) throw new Error('no authorization URL');
  return client.authorizationUrl;
}

async function mcpClient(authProvider: OAuthClientProvider): Promise<Client> {
  const client = new Client({ name: 'butler-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { authProvider }));
  return client;
}

async function callText(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  const [first] = result.content as { type: string; text?: string }[];
  return first?.text ?? '';
}

async function postForm(
  path: string,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(new URL(path, server.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function mcpStatus(accessToken: string): Promise<number> {
  return fetch(server.url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  }).then((response) => response.status);
}

describe('OAuth MCP fixture', () => {
  it('serves the metadata the SDK client discovers, and names it on every 401', async () => {
    await start();
    const unauthenticated = await fetch(server.url, { method: 'POST', body: '{}' });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('www-authenticate')).toContain(
      `resource_metadata="${server.resourceMetadataUrl}"`,
    );
    expect(server.resourceMetadataUrl).toBe(
      server.url.replace('/mcp', '/.well-known/oauth-protected-resource/mcp'),
    );

    const resource = await (await fetch(server.resourceMetadataUrl)).json();
    expect(resource).toMatchObject({ resource: server.url, authorization_servers: [server.issuer] });
    const metadata = await (
      await fetch(new URL('/.well-known/oauth-authorization-server', server.url))
    ).json();
    expect(metadata).toMatchObject({
      issuer: server.issuer,
      code_challenge_methods_supported: ['S256'],
      revocation_endpoint: new URL('/revoke', server.url).href,
      registration_endpoint: new URL('/register', server.url).href,
    });
  });

  it('connects a person with the SDK client, and the client refreshes once its access token expires', async () => {
    await start();
    const olga = new MemoryOAuthClient();
    expect(await auth(olga, { serverUrl: server.url })).toBe('REDIRECT');
    const authorizationUrl = requireUrl(olga);
    // What the SDK puts in the authorization request by itself.
    expect(Object.fromEntries(authorizationUrl.searchParams)).toMatchObject({
      response_type: 'code',
      code_challenge_method: 'S256',
      redirect_uri: redirectUrl,
      state: 'state-1',
      resource: server.url,
    });

    server.login('olga');
    const callback = await openAuthorization(authorizationUrl);
    expect(callback.origin + callback.pathname).toBe(redirectUrl);
    expect(callback.searchParams.get('state')).toBe('state-1');
    const code = callback.searchParams.get('code') ?? '';
    expect(await auth(olga, { serverUrl: server.url, authorizationCode: code })).toBe('AUTHORIZED');
    expect(olga.saved).toMatchObject({ token_type: 'Bearer', expires_in: 3600, issuer: server.issuer });
    expect(olga.saved?.refresh_token).toBeTypeOf('string');

    const client = await mcpClient(olga);
    expect(await callText(client, 'whoami')).toBe('olga');
    expect(await callText(client, 'create_ticket', { title: 'Printer on fire' })).toBe(
      'created ticket #1 for olga',
    );
    const firstRefreshToken = olga.saved?.refresh_token;

    server.expireAccessTokens();
    expect(await callText(client, 'list_tickets')).toBe('[{"number":1,"title":"Printer on fire"}]');
    expect(olga.saved?.refresh_token).not.toBe(firstRefreshToken);
    await client.close();

    expect(server.tickets()).toEqual([{ number: 1, account: 'olga', title: 'Printer on fire' }]);
    expect(server.calls().map(({ tool, account }) => `${tool}:${account}`)).toEqual([
      'whoami:olga',
      'create_ticket:olga',
      'list_tickets:olga',
    ]);
    expect(server.stats()).toMatchObject({
      registrations: 1,
      authorizations: 1,
      codeExchanges: 1,
      refreshes: 1,
      refreshReuses: 0,
    });
  });

  it('revokes the whole grant when a rotated refresh token is used again', async () => {
    await start();
    server.login('olga');
    const first = new MemoryOAuthClient();
    await connectPerson(first);
    // A second process that read the same tokens before the first one refreshed.
    const stale = new MemoryOAuthClient();
    stale.client = first.client;
    stale.saved = first.saved;

    expect(await auth(first, { serverUrl: server.url })).toBe('AUTHORIZED');
    const current = first.saved;
    expect(await mcpStatus(current?.access_token ?? '')).toBe(200);

    // The SDK answers invalid_grant by dropping the tokens and starting a new authorization.
    expect(await auth(stale, { serverUrl: server.url })).toBe('REDIRECT');
    expect(stale.saved).toBeUndefined();
    expect(server.stats()).toMatchObject({ refreshes: 1, refreshReuses: 1 });
    expect(await mcpStatus(current?.access_token ?? '')).toBe(401);
    const refresh = await postForm('/token', {
      grant_type: 'refresh_token',
      refresh_token: current?.refresh_token ?? '',
      client_id: first.client?.client_id ?? '',
      resource: server.url,
    });
    expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(server.stats().rejected).toContain(
      '/token invalid_grant: the refresh token was already used; the grant is revoked',
    );
  });

  it('lets only one of two processes that refresh the same token at once win: the grant is then revoked', async () => {
    await start({ slowTokenEndpointMs: 100, accessTokenTtlSeconds: 60 });
    server.login('olga');
    const first = new MemoryOAuthClient();
    await connectPerson(first);
    expect(first.saved?.expires_in).toBe(60);
    const second = new MemoryOAuthClient();
    second.client = first.client;
    second.saved = first.saved;

    const results = await Promise.all([
      auth(first, { serverUrl: server.url }),
      auth(second, { serverUrl: server.url }),
    ]);
    expect(results.sort()).toEqual(['AUTHORIZED', 'REDIRECT']);
    const winner = first.saved ?? second.saved;
    expect(await mcpStatus(winner?.access_token ?? '')).toBe(401);
    expect(server.stats()).toMatchObject({ refreshes: 1, refreshReuses: 1 });
  });

  it('refuses registrations a hosted provider refuses', async () => {
    await start();
    const register = (metadata: Record<string, unknown>) =>
      fetch(new URL('/register', server.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          redirect_uris: [redirectUrl],
          token_endpoint_auth_method: 'none',
          ...metadata,
        }),
      }).then(async (response) => ({ status: response.status, body: await response.json() }));

    expect(await register({ grant_types: ['client_credentials'] })).toMatchObject({
      status: 400,
      body: { error: 'invalid_client_metadata' },
    });
    expect(await register({ redirect_uris: ['http://butler.example/oauth/callback'] })).toMatchObject({
      status: 400,
      body: { error: 'invalid_redirect_uri' },
    });
    expect(await register({})).toMatchObject({ status: 201, body: { grant_types: ['authorization_code'] } });
    expect(server.stats().registrations).toBe(1);
  });

  it('refuses plain PKCE, a foreign resource and a redirect URI that is not registered exactly', async () => {
    await start();
    server.login('olga');
    const olga = new MemoryOAuthClient();
    expect(await auth(olga, { serverUrl: server.url })).toBe('REDIRECT');
    const tampered = (name: string, value: string | undefined) => {
      const url = new URL(requireUrl(olga));
      if (value === undefined) url.searchParams.delete(name);
      else url.searchParams.set(name, value);
      return url;
    };
    const errorOf = async (url: URL) => {
      const callback = await openAuthorization(url);
      expect(callback.searchParams.get('state')).toBe('state-1');
      return callback.searchParams.get('error');
    };

    expect(await errorOf(tampered('code_challenge_method', 'plain'))).toBe('invalid_request');
    expect(await errorOf(tampered('code_challenge', undefined))).toBe('invalid_request');
    expect(await errorOf(tampered('resource', new URL('/other', server.url).href))).toBe('invalid_target');
    expect(await errorOf(tampered('resource', undefined))).toBe('invalid_target');
    // The SDK would accept another loopback port (RFC 8252); the provider answers without redirecting.
    const otherPort = await fetch(tampered('redirect_uri', 'http://127.0.0.1:9999/oauth/callback'), {
      redirect: 'manual',
    });
    expect(otherPort.status).toBe(400);
    server.denyNext();
    expect(await errorOf(requireUrl(olga))).toBe('access_denied');
    server.logout();
    expect(await errorOf(requireUrl(olga))).toBe('access_denied');
    expect(server.stats().authorizations).toBe(0);

    const code = (await openAuthorization(requireUrl(olga), 'olga')).searchParams.get('code');
    const exchange = (overrides: Record<string, string>) =>
      postForm('/token', {
        grant_type: 'authorization_code',
        code: code ?? '',
        code_verifier: olga.verifier ?? '',
        redirect_uri: redirectUrl,
        client_id: olga.client?.client_id ?? '',
        resource: server.url,
        ...overrides,
      });
    expect((await exchange({ code_verifier: 'x'.repeat(43) })).body.error).toBe('invalid_grant');
    expect((await exchange({ redirect_uri: 'http://127.0.0.1:9999/oauth/callback' })).body.error).toBe(
      'invalid_grant',
    );
    expect((await exchange({ resource: new URL('/other', server.url).href })).body.error).toBe(
      'invalid_target',
    );
    const tokens = await exchange({});
    expect(tokens.status).toBe(200);
    expect(await mcpStatus(String(tokens.body.access_token))).toBe(200);
    // A code used twice is refused, and what it was exchanged for stops working.
    expect((await exchange({})).body.error).toBe('invalid_grant');
    expect(await mcpStatus(String(tokens.body.access_token))).toBe(401);

    expect(server.stats().rejected).toEqual([
      expect.stringMatching(/^\/authorize invalid_request: .*code_challenge_method/s),
      expect.stringMatching(/^\/authorize invalid_request: .*code_challenge/s),
      expect.stringMatching(/^\/authorize invalid_target: resource http:\/\/.*\/other is not/),
      '/authorize invalid_target: resource (RFC 8707) is required',
      expect.stringMatching(/^\/authorize invalid_request: redirect_uri .* is not registered/),
      '/authorize access_denied: the person declined',
      '/authorize access_denied: nobody is logged in to the provider',
      '/token invalid_grant: code_verifier does not match the challenge',
      '/token invalid_grant: redirect_uri does not match the authorization request',
      expect.stringMatching(/^\/token invalid_target: /),
      '/token invalid_grant: the authorization code was already used; its grant is revoked',
      '/mcp invalid_token: the access token was revoked',
    ]);
  });

  it('revokes a grant through its refresh token (RFC 7009)', async () => {
    await start();
    server.login('olga');
    const olga = new MemoryOAuthClient();
    await connectPerson(olga);
    const revoked = await postForm('/revoke', {
      token: olga.saved?.refresh_token ?? '',
      token_type_hint: 'refresh_token',
      client_id: olga.client?.client_id ?? '',
    });
    expect(revoked.status).toBe(200);
    expect(await mcpStatus(olga.saved?.access_token ?? '')).toBe(401);
    expect(await auth(olga, { serverUrl: server.url })).toBe('REDIRECT');
    expect(server.stats()).toMatchObject({ revocations: 1, refreshes: 0 });
  });

  it('issues refresh tokens only to clients that registered the grant', async () => {
    await start();
    server.login('ivan');
    const ivan = new MemoryOAuthClient({
      redirect_uris: [redirectUrl],
      token_endpoint_auth_method: 'none',
    });
    await connectPerson(ivan);
    expect(ivan.client).toMatchObject({ grant_types: ['authorization_code'] });
    expect(ivan.saved?.refresh_token).toBeUndefined();
    const client = await mcpClient(ivan);
    expect(await callText(client, 'whoami')).toBe('ivan');
    await client.close();
  });

  it('works with a pre-registered confidential client when dynamic registration is off', async () => {
    await start({
      dynamicRegistration: false,
      preRegisteredClient: { clientId: 'butler', clientSecret: 'sesame', redirectUris: [redirectUrl] },
    });
    const metadata = await fetch(new URL('/.well-known/oauth-authorization-server', server.url));
    expect(await metadata.json()).not.toHaveProperty('registration_endpoint');
    expect((await fetch(new URL('/register', server.url), { method: 'POST' })).status).toBe(404);

    server.login('olga');
    const olga = new MemoryOAuthClient();
    olga.client = { client_id: 'butler', client_secret: 'sesame' };
    await connectPerson(olga);
    server.expireAccessTokens();
    const client = await mcpClient(olga);
    expect(await callText(client, 'whoami')).toBe('olga');
    await client.close();
    expect(server.stats()).toMatchObject({ registrations: 0, codeExchanges: 1, refreshes: 1 });
  });
});
