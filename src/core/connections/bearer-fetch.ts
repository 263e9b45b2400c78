import type { FetchLike } from '@modelcontextprotocol/client';
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/client';

/**
 * The MCP transport's fetch for one owner's session: each request carries the owner's stored access token, read
 * afresh (a refresh in any process is picked up by the next request). It remembers which token version it sent
 * last, so a 401 refreshes only when nobody has since, and what the server's last 401 or 403 asked for
 * (`WWW-Authenticate`: an `insufficient_scope` error and the scope it wants, for a step-up).
 */
export interface BearerState {
  /** The token version the last request carried. */
  sentVersion: number | undefined;
  /** The `WWW-Authenticate` parameters of the last 401 or 403. */
  challenge: { error?: string; scope?: string } | undefined;
}

export function bearerFetch(
  base: FetchLike,
  token: () => Promise<{ token: string; version: number } | undefined>,
  state: BearerState,
): FetchLike {
  return async (url, init = {}) => {
    const headers = new Headers(init.headers);
    const current = await token();
    state.sentVersion = current?.version;
    if (current) headers.set('authorization', `Bearer ${current.token}`);
    const response = await base(url, { ...init, headers });
    if (response.status === 401 || response.status === 403) {
      const { error, scope } = extractWWWAuthenticateParams(response);
      state.challenge = { ...(error ? { error } : {}), ...(scope ? { scope } : {}) };
    }
    return response;
  };
}
