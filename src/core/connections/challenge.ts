import type { FetchLike } from '@modelcontextprotocol/client';
import {
  Client,
  extractWWWAuthenticateParams,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';

/**
 * What an MCP server's own 401 says about its authorization (MCP 2025-11-25, Authorization: protected resource
 * metadata discovery and scope selection): where its protected resource metadata is, and which scope a client
 * should ask for. Found the way a client meets it: a session without a token, opened and asked for its tools (a
 * server may let `initialize` in and answer 401 only to the first request that needs authority). Empty when the
 * server never answered 401, or said nothing in it: discovery then falls back to the well-known URLs.
 */
export interface Challenge {
  resourceMetadataUrl?: URL;
  scope?: string;
}

export async function challengeOf(serverUrl: string, fetchFn: FetchLike): Promise<Challenge> {
  let challenge: Challenge | undefined;
  const recording: FetchLike = async (url, init) => {
    const response = await fetchFn(url, init);
    if (response.status === 401 && !challenge) {
      const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
      challenge = { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
    }
    return response;
  };
  const client = new Client({ name: 'butler', version: '0.1.0' }, { capabilities: {} });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { fetch: recording }));
    await client.listTools();
  } catch {
    // The 401 is what was looked for; any other failure leaves discovery to the well-known URLs.
  } finally {
    await client.close().catch(() => {});
  }
  return challenge ?? {};
}
