import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { testAccountHeader } from './oauth-mcp-provider.js';

/**
 * The client side of the OAuth MCP test server (`oauth-mcp-server.ts`): a person's browser, and the SDK client
 * provider a connection keeps its registration and tokens in.
 */

/** A loopback callback on a port nothing listens on: the tests read the redirect instead of following it. */
export const redirectUrl = 'http://127.0.0.1:8765/oauth/callback';

/** What Butler keeps per person: client registration, tokens and the pending PKCE verifier, in memory. */
export class MemoryOAuthClient implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier: string | undefined;
  authorizationUrl: URL | undefined;
  private states = 0;

  constructor(
    readonly clientMetadata: OAuthClientMetadata = {
      client_name: 'Butler',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
  ) {}

  get redirectUrl() {
    return redirectUrl;
  }
  state() {
    this.states += 1;
    return `state-${this.states}`;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    if (this.verifier === undefined) throw new Error('no verifier saved');
    return this.verifier;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
  }
}

/** Opens an authorization URL as a logged-in browser would (without following the redirect), returning where the provider redirected to. */
export async function openAuthorization(url: URL | string, account?: string): Promise<URL> {
  const response = await fetch(url, {
    redirect: 'manual',
    headers: account === undefined ? {} : { [testAccountHeader]: account },
  });
  const location = response.headers.get('location');
  if (response.status !== 302 || location === null) {
    throw new Error(`expected a redirect, got ${response.status}: ${await response.text()}`);
  }
  return new URL(location);
}
