import { randomBytes, randomUUID } from 'node:crypto';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import {
  AccessDeniedError,
  CustomOAuthError,
  InvalidClientMetadataError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
  InvalidTokenError,
  UnauthorizedClientError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type {
  AuthorizationParams,
  OAuthServerProvider,
} from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type {
  OAuthClientInformationFull,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Response } from 'express';

/**
 * The authorization server logic of the OAuth MCP test server (`oauth-mcp-server.ts`): as strict as the hosted
 * providers Butler connects to. The SDK's handlers parse requests, authenticate clients and check PKCE against
 * `challengeForAuthorizationCode`; everything else that a real provider refuses is refused here.
 */

/** The request header that names who is logged in to the provider for one authorization request. */
export const testAccountHeader = 'x-test-account';

export interface OAuthMcpStats {
  registrations: number;
  /** Client metadata documents fetched (an https client id). */
  metadataFetches: number;
  /** Authorization requests approved (codes issued). */
  authorizations: number;
  codeExchanges: number;
  /** Successful refreshes; a reused refresh token counts in `refreshReuses` instead. */
  refreshes: number;
  refreshReuses: number;
  revocations: number;
  /** Why each refused request was refused: `<path> <error>: <description>`, in order. */
  rejected: string[];
}

/** A client registered out of band, as with providers that have no dynamic registration. */
export interface PreRegisteredClient {
  clientId: string;
  /** With a secret the client authenticates with `client_secret_post`; without one it is public. */
  clientSecret?: string;
  redirectUris: string[];
  /** `['authorization_code', 'refresh_token']` unless given. */
  grantTypes?: string[];
}

export interface ProviderSettings {
  /** The MCP endpoint: the only resource indicator accepted, and every token's audience. */
  resource: string;
  accessTokenTtlSeconds: number;
  dynamicRegistration: boolean;
  preRegisteredClient: PreRegisteredClient | undefined;
  /** Delays every token response after its tokens are issued (and any old refresh token is spent). */
  slowTokenEndpointMs: number;
  /**
   * Client ID Metadata Documents: an https client id is the URL of the client's metadata document, fetched with
   * this (the test's stand-in for the provider's HTTP client); absent: such ids are unknown.
   */
  fetchClientMetadata?: ((url: string) => Promise<unknown>) | undefined;
}

const authorizationCodeTtlMs = 60_000;
const supportedGrantTypes = ['authorization_code', 'refresh_token'];
const loopbackHosts = new Set(['127.0.0.1', 'localhost', '[::1]']);
// A base64url SHA-256 digest, the only challenge S256 can produce.
const s256Challenge = /^[A-Za-z0-9_-]{43}$/;

interface AuthorizationCode {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: string[];
  account: string;
  expiresAt: number;
  /** Set once the code is exchanged; a second exchange revokes this grant. */
  grantId: string | undefined;
}

/** What one approval led to: every token issued from it, and their refreshes, share its fate. */
interface Grant {
  id: string;
  clientId: string;
  account: string;
  scopes: string[];
  revoked: boolean;
}

interface AccessToken {
  grantId: string;
  resource: string;
  scopes: string[];
  expiresAt: number;
  revoked: boolean;
}

interface RefreshToken {
  grantId: string;
  clientId: string;
  /** A rotated token stays on record so that its reuse is recognised. */
  rotated: boolean;
}

const randomToken = () => randomBytes(32).toString('base64url');

function grantTypesOf(client: OAuthClientInformationFull): string[] {
  return client.grant_types ?? ['authorization_code'];
}

function checkRedirectUri(uri: string): void {
  const url = URL.parse(uri);
  const allowed =
    url !== null &&
    url.hash === '' &&
    (url.protocol === 'https:' || (url.protocol === 'http:' && loopbackHosts.has(url.hostname)));
  if (!allowed) {
    throw new CustomOAuthError('invalid_redirect_uri', `${uri} is neither https nor http on loopback`);
  }
}

export class TestAuthorizationServer implements OAuthServerProvider {
  readonly stats: OAuthMcpStats = {
    registrations: 0,
    metadataFetches: 0,
    authorizations: 0,
    codeExchanges: 0,
    refreshes: 0,
    refreshReuses: 0,
    revocations: 0,
    rejected: [],
  };
  /** Who the provider's browser session belongs to; `testAccountHeader` overrides it per request. */
  loggedIn: string | undefined;
  /** The next authorization request is declined with `access_denied`. */
  denyNext = false;
  readonly clientsStore: OAuthRegisteredClientsStore;
  private readonly clients = new Map<string, OAuthClientInformationFull>();
  private readonly codes = new Map<string, AuthorizationCode>();
  private readonly grants = new Map<string, Grant>();
  private readonly accessTokens = new Map<string, AccessToken>();
  private readonly refreshTokens = new Map<string, RefreshToken>();

  constructor(readonly settings: ProviderSettings) {
    const preRegistered = settings.preRegisteredClient;
    if (preRegistered) {
      this.clients.set(preRegistered.clientId, {
        client_id: preRegistered.clientId,
        redirect_uris: preRegistered.redirectUris,
        grant_types: preRegistered.grantTypes ?? supportedGrantTypes,
        response_types: ['code'],
        ...(preRegistered.clientSecret === undefined
          ? { token_endpoint_auth_method: 'none' }
          : { client_secret: preRegistered.clientSecret, token_endpoint_auth_method: 'client_secret_post' }),
      });
    }
    const getClient = (clientId: string) =>
      this.clients.get(clientId) ??
      (clientId.startsWith('https://') ? this.fromMetadata(clientId) : undefined);
    // The SDK advertises and mounts the registration endpoint only when the store can register.
    this.clientsStore = settings.dynamicRegistration
      ? { getClient, registerClient: (client) => this.register(client) }
      : { getClient };
  }

  /**
   * A client whose id is its metadata document's URL (draft-ietf-oauth-client-id-metadata-document): the
   * document must name that URL as `client_id` and list its redirect URIs; such a client is public.
   */
  private async fromMetadata(clientId: string): Promise<OAuthClientInformationFull | undefined> {
    const fetchDocument = this.settings.fetchClientMetadata;
    if (!fetchDocument) return undefined;
    this.stats.metadataFetches += 1;
    const document = (await fetchDocument(clientId).catch(() => undefined)) as
      | Record<string, unknown>
      | undefined;
    const redirectUris = document?.redirect_uris;
    if (document?.client_id !== clientId || !Array.isArray(redirectUris) || redirectUris.length === 0)
      throw new InvalidClientMetadataError(`the metadata document at ${clientId} does not describe it`);
    for (const uri of redirectUris) checkRedirectUri(String(uri));
    if (document.token_endpoint_auth_method !== undefined && document.token_endpoint_auth_method !== 'none')
      throw new InvalidClientMetadataError('a metadata document client authenticates with none');
    return {
      client_id: clientId,
      redirect_uris: redirectUris.map(String),
      grant_types: Array.isArray(document.grant_types)
        ? document.grant_types.map(String)
        : ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(typeof document.client_name === 'string' ? { client_name: document.client_name } : {}),
    };
  }

  private register(
    client: Omit<OAuthClientInformationFull, 'client_id' | 'client_id_issued_at'>,
  ): OAuthClientInformationFull {
    // RFC 7591's default: a client that names no grant types gets no refresh tokens.
    const grantTypes = client.grant_types ?? ['authorization_code'];
    const unsupported = grantTypes.filter((type) => !supportedGrantTypes.includes(type));
    if (unsupported.length > 0 || !grantTypes.includes('authorization_code')) {
      throw new InvalidClientMetadataError(`unsupported grant_types ${JSON.stringify(grantTypes)}`);
    }
    if (client.response_types && client.response_types.join(' ') !== 'code') {
      throw new InvalidClientMetadataError('response_types must be ["code"]');
    }
    if (client.token_endpoint_auth_method === 'client_secret_basic') {
      throw new InvalidClientMetadataError(
        'client_secret_basic is not supported; use client_secret_post or none',
      );
    }
    if (client.redirect_uris.length === 0) throw new InvalidClientMetadataError('redirect_uris is empty');
    for (const uri of client.redirect_uris) checkRedirectUri(uri);
    // The SDK's handler has already generated the id (and a secret unless the method is `none`).
    const generated =
      'client_id' in client && typeof client.client_id === 'string' ? client.client_id : undefined;
    const registered: OAuthClientInformationFull = {
      ...client,
      client_id: generated ?? randomUUID(),
      grant_types: grantTypes,
      response_types: ['code'],
      token_endpoint_auth_method: client.token_endpoint_auth_method ?? 'client_secret_post',
    };
    this.clients.set(registered.client_id, registered);
    this.stats.registrations += 1;
    return registered;
  }

  async authorize(
    client: OAuthClientInformationFull,
    params: AuthorizationParams,
    response: Response,
  ): Promise<void> {
    // The SDK lets a loopback redirect URI differ in port (RFC 8252); hosted providers match exactly, and a
    // mismatch is answered here rather than redirected to.
    if (!client.redirect_uris.includes(params.redirectUri)) {
      const error = new InvalidRequestError(
        `redirect_uri ${params.redirectUri} is not registered (exact match)`,
      );
      response.status(400).json(error.toResponseObject());
      return;
    }
    // Errors thrown from here on are redirected to the client with `state`, by the SDK.
    if (!grantTypesOf(client).includes('authorization_code')) {
      throw new UnauthorizedClientError('the client did not register the authorization_code grant');
    }
    if (!s256Challenge.test(params.codeChallenge)) {
      throw new InvalidRequestError('code_challenge is not an S256 challenge');
    }
    this.checkResource(params.resource?.href);
    if (this.denyNext) {
      this.denyNext = false;
      throw new AccessDeniedError('the person declined');
    }
    const header = response.req.headers[testAccountHeader];
    const account = typeof header === 'string' ? header : this.loggedIn;
    if (account === undefined) throw new AccessDeniedError('nobody is logged in to the provider');

    const code = randomToken();
    this.codes.set(code, {
      clientId: client.client_id,
      redirectUri: params.redirectUri,
      codeChallenge: params.codeChallenge,
      scopes: params.scopes ?? [],
      account,
      expiresAt: Date.now() + authorizationCodeTtlMs,
      grantId: undefined,
    });
    this.stats.authorizations += 1;
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    response.redirect(302, target.href);
  }

  /** Called by the SDK's token handler to check PKCE before `exchangeAuthorizationCode`. */
  async challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<string> {
    return this.redeemableCode(client, code).codeChallenge;
  }

  async exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    _codeVerifier?: string,
    redirectUri?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    const record = this.redeemableCode(client, code);
    if (redirectUri !== record.redirectUri) {
      throw new InvalidGrantError('redirect_uri does not match the authorization request');
    }
    this.checkResource(resource?.href);
    const grant: Grant = {
      id: randomUUID(),
      clientId: client.client_id,
      account: record.account,
      scopes: record.scopes,
      revoked: false,
    };
    this.grants.set(grant.id, grant);
    record.grantId = grant.id;
    this.stats.codeExchanges += 1;
    return this.issueTokens(client, grant, grant.scopes);
  }

  async exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
    scopes?: string[],
    resource?: URL,
  ): Promise<OAuthTokens> {
    const record = this.refreshTokens.get(refreshToken);
    const grant = record && this.grants.get(record.grantId);
    if (!record || !grant) throw new InvalidGrantError('unknown refresh token');
    if (record.clientId !== client.client_id) {
      throw new InvalidGrantError('the refresh token was issued to another client');
    }
    if (grant.revoked) throw new InvalidGrantError('the grant was revoked');
    if (record.rotated) {
      // Someone holds a spent token: the legitimate client or a thief. Strict servers end the whole grant.
      grant.revoked = true;
      this.stats.refreshReuses += 1;
      throw new InvalidGrantError('the refresh token was already used; the grant is revoked');
    }
    if (!grantTypesOf(client).includes('refresh_token')) {
      throw new UnauthorizedClientError('the client did not register the refresh_token grant');
    }
    this.checkResource(resource?.href);
    const narrowed = scopes ?? grant.scopes;
    if (narrowed.some((scope) => !grant.scopes.includes(scope))) {
      throw new InvalidScopeError('a refresh cannot widen the granted scopes');
    }
    record.rotated = true;
    this.stats.refreshes += 1;
    return this.issueTokens(client, grant, narrowed);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const record = this.accessTokens.get(token);
    const grant = record && this.grants.get(record.grantId);
    if (!record || !grant) throw new InvalidTokenError('unknown access token');
    if (record.revoked || grant.revoked) throw new InvalidTokenError('the access token was revoked');
    if (record.expiresAt <= Date.now()) throw new InvalidTokenError('the access token expired');
    if (record.resource !== this.settings.resource) {
      throw new InvalidTokenError('the access token was issued for another resource');
    }
    return {
      token,
      clientId: grant.clientId,
      scopes: record.scopes,
      expiresAt: Math.floor(record.expiresAt / 1000),
      resource: new URL(record.resource),
      extra: { account: grant.account },
    };
  }

  /** RFC 7009. Revoking a refresh token revokes its grant; revoking an access token revokes only that token. */
  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    const refresh = this.refreshTokens.get(request.token);
    const access = this.accessTokens.get(request.token);
    const grant = this.grants.get(refresh?.grantId ?? access?.grantId ?? '');
    if (!grant) return;
    if (grant.clientId !== client.client_id) {
      throw new UnauthorizedClientError('the token was issued to another client');
    }
    if (refresh) grant.revoked = true;
    else if (access) access.revoked = true;
    this.stats.revocations += 1;
  }

  /** Every access and refresh token issued so far, for a test to look for them where they must not be. */
  issuedTokens(): string[] {
    return [...this.accessTokens.keys(), ...this.refreshTokens.keys()];
  }

  /** Every access token issued so far stops working now; refresh tokens keep working. */
  expireAccessTokens(): void {
    const now = Date.now();
    for (const token of this.accessTokens.values()) token.expiresAt = Math.min(token.expiresAt, now);
  }

  private redeemableCode(client: OAuthClientInformationFull, code: string): AuthorizationCode {
    const record = this.codes.get(code);
    if (!record) throw new InvalidGrantError('unknown authorization code');
    if (record.grantId !== undefined) {
      // RFC 6749 §4.1.2: a code used twice revokes what it was exchanged for.
      const grant = this.grants.get(record.grantId);
      if (grant) grant.revoked = true;
      throw new InvalidGrantError('the authorization code was already used; its grant is revoked');
    }
    if (record.clientId !== client.client_id) {
      throw new InvalidGrantError('the authorization code was issued to another client');
    }
    if (record.expiresAt <= Date.now()) throw new InvalidGrantError('the authorization code expired');
    return record;
  }

  private checkResource(resource: string | undefined): void {
    if (resource === undefined) throw new InvalidTargetError('resource (RFC 8707) is required');
    if (resource !== this.settings.resource) {
      throw new InvalidTargetError(`resource ${resource} is not ${this.settings.resource}`);
    }
  }

  private async issueTokens(
    client: OAuthClientInformationFull,
    grant: Grant,
    scopes: string[],
  ): Promise<OAuthTokens> {
    const accessToken = randomToken();
    const ttl = this.settings.accessTokenTtlSeconds;
    this.accessTokens.set(accessToken, {
      grantId: grant.id,
      resource: this.settings.resource,
      scopes,
      expiresAt: Date.now() + ttl * 1000,
      revoked: false,
    });
    const tokens: OAuthTokens = { access_token: accessToken, token_type: 'Bearer', expires_in: ttl };
    if (scopes.length > 0) tokens.scope = scopes.join(' ');
    if (grantTypesOf(client).includes('refresh_token')) {
      const refreshToken = randomToken();
      this.refreshTokens.set(refreshToken, { grantId: grant.id, clientId: client.client_id, rotated: false });
      tokens.refresh_token = refreshToken;
    }
    if (this.settings.slowTokenEndpointMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.settings.slowTokenEndpointMs));
    }
    return tokens;
  }
}
