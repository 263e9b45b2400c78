import { expect } from 'vitest';
import type { ChatUser } from '../../../src/core/contracts/events.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import type { Tool } from '../../../src/core/tools/tool.js';
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

/** A browser's cookies for Butler's site: what `Set-Cookie` answers left, sent back with each request. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  /** Keeps what `response` set (a cookie set to expire is dropped). */
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator);
      if (/max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(separator + 1));
    }
  }

  header(): Record<string, string> {
    const value = [...this.cookies].map(([name, cookie]) => `${name}=${cookie}`).join('; ');
    return value ? { cookie: value } : {};
  }

  get size(): number {
    return this.cookies.size;
  }
}

/**
 * A person's browser: opens the link (a page that uses nothing), continues (the link is used, and a cookie
 * binds the flow to this browser), and hands back where the provider's sign-in is.
 */
export async function openLink(link: string, butlerUrl: string, jar = new CookieJar()) {
  const page = await fetch(onButler(link, butlerUrl));
  expect(page.status).toBe(200);
  expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  const used = await fetch(onButler(link, butlerUrl), { method: 'POST', redirect: 'manual' });
  expect(used.status).toBe(303);
  jar.take(used);
  return { authorization: used.headers.get('location') ?? '', jar, cookies: used.headers.getSetCookie() };
}

/**
 * The sign-in at the provider as `account` (in whatever browser holds `jar`), back to Butler's callback.
 * Returns the callback's answer and URL.
 */
export async function signInAndReturn(
  authorization: string,
  account: string,
  butlerUrl: string,
  jar: CookieJar,
) {
  const back = await openAuthorization(authorization, account);
  expect(back.origin).toBe(publicUrl);
  const callback = onButler(back.href, butlerUrl);
  const answer = await fetch(callback, { headers: jar.header() });
  jar.take(answer);
  return {
    status: answer.status,
    page: await answer.text(),
    callback,
    authorization: new URL(authorization),
  };
}

/** Opens the link, signs in as `account` and comes back, all in one browser. */
export async function connectThrough(link: string, butlerUrl: string, account: string) {
  const { authorization, jar } = await openLink(link, butlerUrl);
  return signInAndReturn(authorization, account, butlerUrl, jar);
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

/** Runs `tool` with no arguments as `person` alone asked, in a Slack channel (what a turn would pass). */
export const callAs = (tool: Tool, person: ChatUser) =>
  tool.execute(
    {},
    {
      address: { platform: 'slack', workspace: 'T1', channel: 'C1', thread: 'main' },
      conversationKey: 'slack:T1:C1:main',
      requester: person,
      requesters: [person],
      isDirect: false,
      callId: `call_${Math.random()}`,
      signal: AbortSignal.timeout(30_000),
      logger: silentLogger,
    },
  );
