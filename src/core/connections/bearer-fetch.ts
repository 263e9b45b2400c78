import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * The MCP transport's fetch for one owner's session: each request carries the owner's stored access token, read
 * afresh (a refresh in any process is picked up by the next request). It remembers which token version it sent
 * last, so a 401 refreshes only when nobody has since, and the server's last challenge (`WWW-Authenticate` of a
 * 401 or 403), which says what the server wants.
 */
export interface BearerState {
  /** The token version the last request carried. */
  sentVersion: number | undefined;
  /** The `WWW-Authenticate` header of the last 401 or 403. */
  challenge: string | undefined;
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
    if (response.status === 401 || response.status === 403)
      state.challenge = response.headers.get('www-authenticate') ?? undefined;
    return response;
  };
}
