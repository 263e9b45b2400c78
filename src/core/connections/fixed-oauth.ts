import { createHash, randomBytes } from 'node:crypto';
import type { FetchLike, OAuthTokens } from '@modelcontextprotocol/client';
import type { McpOAuthSettings } from '../tools/mcp/mcp-settings.js';
import type { StoredOAuthProvider } from './stored-provider.js';

/**
 * OAuth with an authorization server whose endpoints are known in advance and whose token endpoint takes a
 * JSON body (Feishu's `authen/v2/oauth/token`), which the MCP SDK's `auth()` (discovery, form bodies) cannot
 * reach. It takes the SDK's place for such a server and keeps its contract, over the same stored provider:
 * a Connect link gets an authorization URL (PKCE S256 and a `state`), the callback exchanges the code with
 * the link's verifier, a refresh rotates the tokens, and a refresh the server refuses (`invalid_grant`, or one
 * of `refusedCodes`) deletes them, so the person gets a new link.
 */

export interface FixedEndpoints {
  authorizationUrl: string;
  tokenUrl: string;
  /** The server's own codes (beside `invalid_grant`) that say a refresh token is no longer good. */
  refusedCodes: readonly number[];
}

type Answer = Record<string, unknown>;

export async function fixedAuth(
  provider: StoredOAuthProvider,
  endpoints: FixedEndpoints,
  oauth: McpOAuthSettings,
  options: { fetchFn: FetchLike; authorizationCode?: string; scope?: string },
): Promise<'AUTHORIZED' | 'REDIRECT'> {
  const client = { client_id: oauth.clientId ?? '', client_secret: oauth.clientSecret ?? '' };
  if (options.authorizationCode !== undefined) {
    const answer = await post(endpoints, options.fetchFn, {
      grant_type: 'authorization_code',
      ...client,
      code: options.authorizationCode,
      redirect_uri: provider.redirectUrl,
      code_verifier: provider.codeVerifier(),
    });
    if (!answer.ok) throw new Error(`the token endpoint refused the code: ${answer.reason}`);
    await provider.saveTokens(answer.tokens);
    return 'AUTHORIZED';
  }
  const held = await provider.tokens();
  if (held && !held.refresh_token) {
    // Nothing to refresh with (the server gave no refresh token): the person connects again.
    await provider.invalidateCredentials('tokens');
    return 'REDIRECT';
  }
  if (held?.refresh_token) {
    const answer = await post(endpoints, options.fetchFn, {
      grant_type: 'refresh_token',
      ...client,
      refresh_token: held.refresh_token,
    });
    if (answer.ok) {
      await provider.saveTokens(answer.tokens);
      return 'AUTHORIZED';
    }
    if (!answer.refused) throw new Error(`the token endpoint failed a refresh: ${answer.reason}`);
    await provider.invalidateCredentials('tokens');
    return 'REDIRECT';
  }
  const verifier = randomBytes(32).toString('base64url');
  provider.saveCodeVerifier(verifier);
  const url = new URL(endpoints.authorizationUrl);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    response_type: 'code',
    redirect_uri: provider.redirectUrl,
    state: provider.state(),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...(options.scope ? { scope: options.scope } : {}),
  }).toString();
  await provider.redirectToAuthorization(url);
  return 'REDIRECT';
}

type Posted =
  | { ok: true; tokens: OAuthTokens }
  | { ok: false; reason: string /** The grant is gone: connect again. */; refused: boolean };

async function post(endpoints: FixedEndpoints, fetchFn: FetchLike, body: Answer): Promise<Posted> {
  const response = await fetchFn(endpoints.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  let answer: Answer;
  try {
    answer = (await response.json()) as Answer;
  } catch {
    return { ok: false, reason: `HTTP ${response.status}, not JSON`, refused: false };
  }
  const code = typeof answer.code === 'number' ? answer.code : 0;
  const token = answer.access_token;
  if (response.ok && code === 0 && typeof token === 'string' && token.length > 0) {
    const expiresIn = Number(answer.expires_in);
    return {
      ok: true,
      tokens: {
        access_token: token,
        token_type: typeof answer.token_type === 'string' ? answer.token_type : 'Bearer',
        ...(Number.isFinite(expiresIn) && expiresIn > 0 ? { expires_in: expiresIn } : {}),
        ...(typeof answer.refresh_token === 'string' ? { refresh_token: answer.refresh_token } : {}),
        ...(typeof answer.scope === 'string' ? { scope: answer.scope } : {}),
      },
    };
  }
  const error = typeof answer.error === 'string' ? answer.error : undefined;
  const description =
    typeof answer.error_description === 'string'
      ? answer.error_description
      : typeof answer.msg === 'string'
        ? answer.msg
        : '';
  return {
    ok: false,
    reason: [`HTTP ${response.status}`, error, code ? `code ${code}` : undefined, description]
      .filter(Boolean)
      .join(', '),
    refused: error === 'invalid_grant' || endpoints.refusedCodes.includes(code),
  };
}
