import { expect } from 'vitest';
import type { FakeModelServer, RecordedRequest } from '../../helpers/fake-model-server.js';
import { openAuthorization } from '../../helpers/oauth-mcp-client.js';
import type { OAuthMcpServer } from '../../helpers/oauth-mcp-server.js';

/**
 * What the OAuth connection suites share: Butler's public address (links and the redirect URI are under it;
 * the tests' browser maps it to the running Butler), the config of a person-identity server, and a browser
 * that follows a Connect link through the provider's sign-in and back.
 */

export const publicUrl = 'https://butler.example.com';
/** A fixed key, so the suites' restarts read what the first process sealed. */
export const secretKey = 'b'.repeat(64);

export function oauthServerConfig(server: OAuthMcpServer, identity: 'person' | 'shared' = 'person') {
  return [{ name: 'tickets', url: server.url, oauth: { identity }, timeoutMs: 5_000 }];
}

export const oauthEnv = { BUTLER_PUBLIC_URL: publicUrl, BUTLER_SECRET_KEY: secretKey };

/** The Connect links in `text`, as Butler wrote them (under the public address). */
export function linksIn(text: string): string[] {
  return [...text.matchAll(/https:\/\/butler\.example\.com\/connect\/[A-Za-z0-9_-]{43}/g)].map(
    (match) => match[0],
  );
}

const onButler = (url: string, butlerUrl: string) => url.replace(publicUrl, butlerUrl);

/**
 * A person's browser: opens the link (a page that uses nothing), continues (the link is used), signs in to
 * the provider as `account`, and comes back to Butler's callback. Returns the callback's answer and URL.
 */
export async function connectThrough(link: string, butlerUrl: string, account: string) {
  const page = await fetch(onButler(link, butlerUrl));
  expect(page.status).toBe(200);
  expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  const used = await fetch(onButler(link, butlerUrl), { method: 'POST', redirect: 'manual' });
  expect(used.status).toBe(303);
  const authorization = used.headers.get('location') ?? '';
  const back = await openAuthorization(authorization, account);
  expect(back.origin).toBe(publicUrl);
  const callback = onButler(back.href, butlerUrl);
  const answer = await fetch(callback);
  return {
    status: answer.status,
    page: await answer.text(),
    callback,
    authorization: new URL(authorization),
  };
}

/** The tool results the model was given in its `index`-th request, by tool call id. */
export function toolResultsOf(request: RecordedRequest | undefined): Record<string, string> {
  const results: Record<string, string> = {};
  for (const message of request?.messages ?? [])
    if (message.role === 'tool') results[String(message.tool_call_id)] = String(message.content);
  return results;
}

/** The tools the model was offered in its last request. */
export const offeredTools = (model: FakeModelServer) =>
  (model.requests.at(-1)?.tools ?? []).map((tool) => String((tool.function as { name: string }).name));
