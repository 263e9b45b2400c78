import type { FetchLike, OAuthTokens } from '@modelcontextprotocol/client';
import { selectClientAuthMethod } from '@modelcontextprotocol/client';
import type { StoredOAuthProvider } from './stored-provider.js';

/**
 * Token revocation (RFC 7009), which the MCP SDK's client does not do: the refresh token (which ends the whole
 * grant at most servers) and then the access token, authenticated as the token requests are (the SDK picks
 * the method). False when the server offers no revocation endpoint.
 */
export async function revokeTokens(
  provider: StoredOAuthProvider,
  tokens: OAuthTokens,
  fetchFn: FetchLike,
): Promise<boolean> {
  const metadata = (await provider.discoveryState())?.authorizationServerMetadata;
  // RFC 8414 metadata says where revocation is; OpenID discovery documents do not.
  const endpoint = metadata && 'revocation_endpoint' in metadata ? metadata.revocation_endpoint : undefined;
  const client = await provider.clientInformation();
  if (!metadata || !endpoint || !client) return false;
  const supported = ('revocation_endpoint_auth_methods_supported' in metadata
    ? metadata.revocation_endpoint_auth_methods_supported
    : undefined) ??
    metadata.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  const method = selectClientAuthMethod(client, supported);
  const secret = 'client_secret' in client ? client.client_secret : undefined;
  const candidates: Array<[string, string]> = [];
  if (tokens.refresh_token) candidates.push([tokens.refresh_token, 'refresh_token']);
  candidates.push([tokens.access_token, 'access_token']);
  for (const [token, hint] of candidates) {
    const body = new URLSearchParams({ token, token_type_hint: hint });
    const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded' });
    if (method === 'client_secret_basic' && secret !== undefined) {
      const pair = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret)}`;
      headers.set('authorization', `Basic ${Buffer.from(pair).toString('base64')}`);
    } else {
      body.set('client_id', client.client_id);
      if (method === 'client_secret_post' && secret !== undefined) body.set('client_secret', secret);
    }
    const response = await fetchFn(endpoint, { method: 'POST', headers, body });
    await response.body?.cancel();
    // RFC 7009 §2.2: 200 whether or not the token was valid; anything else is the server's failure.
    if (!response.ok) throw new Error(`the revocation endpoint answered ${response.status}`);
  }
  return true;
}
