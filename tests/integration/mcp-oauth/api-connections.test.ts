import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { dumpDatabase } from '../../helpers/database-dump.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type OAuthMcpServer, startOAuthMcpServer } from '../../helpers/oauth-mcp-server.js';
import { readEvents, types } from '../../helpers/sse-client.js';
import {
  CookieJar,
  connectThrough,
  oauthEnv,
  oauthServerConfig,
  openLink,
  signInAndReturn,
} from './oauth-butler.js';

/**
 * Connections over the HTTP API: the Connect link reaches the key on its own stream (`private_link`, then
 * `connection_required` ends the stream), the turn goes on once connected, and `/connections` lists and ends
 * a key's own connections without ever showing a token; an admin key sees everyone's.
 */

const keys = {
  dev: 'dev-key-0123456789abcdef',
  admin: 'admin-key-0123456789abcdef',
  mallory: 'mallory-key-0123456789abcdef',
  alice: 'alice-key-0123456789abcdef',
};
let model: FakeModelServer;
let provider: OAuthMcpServer;
let app: TestButler;

beforeAll(async () => {
  model = await startFakeModelServer();
  provider = await startOAuthMcpServer();
  app = await startTestButler({
    env: {
      ...oauthEnv,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
      KEY_DEV: keys.dev,
      KEY_ADMIN: keys.admin,
      KEY_MALLORY: keys.mallory,
      KEY_ALICE: keys.alice,
    },
    config: {
      mcpServers: oauthServerConfig(provider),
      api: {
        keys: [
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'dev', key: '${KEY_DEV}', scopes: ['chat'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'admin', key: '${KEY_ADMIN}', scopes: ['chat', 'read'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'mallory', key: '${KEY_MALLORY}', scopes: ['chat'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'alice', key: '${KEY_ALICE}', scopes: ['chat'] },
        ],
      },
    },
  });
});
afterAll(async () => {
  await app.close();
  await provider.close();
  await model.close();
});

type Listing = { items: Array<Record<string, unknown>> };
const listing = async (response: Response) => (await response.json()) as Listing;

const api = (path: string, init: RequestInit & { key?: string } = {}) =>
  fetch(`${app.url}/api/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${init.key ?? keys.dev}`, 'content-type': 'application/json' },
  });

describe('connections over the HTTP API', () => {
  it('streams the link to the key, goes on once connected, and lists and ends the connection', async () => {
    model.enqueue({ toolCalls: [{ id: 'call_connect', name: 'tickets__connect', arguments: '{}' }] });
    const asked = await api('/conversations/tickets-1/messages', {
      method: 'POST',
      body: JSON.stringify({ text: 'connect tickets' }),
    });
    const events = await readEvents(asked);
    expect(types(events)).toContain('private_link');
    expect(types(events).at(-1)).toBe('connection_required');
    const link = String(events.find((event) => event.data.type === 'private_link')?.data.url);
    expect(events.at(-1)?.data).toMatchObject({ server: 'tickets' });

    // The link is shown on the stream, never stored: the event log keeps only its id.
    expect(link).toMatch(/^https:\/\/butler\.example\.com\/connect\//);
    expect(await dumpDatabase(app)).not.toContain(link.split('/connect/')[1]);
    model.enqueue({ text: 'Connected.' });
    expect((await connectThrough(link, app.url, 'dev@tickets')).status).toBe(200);
    await app.settle();
    // Read again once used, the event says a link was sent, and has no URL.
    const replay = await readEvents(await api('/conversations/tickets-1/events?after=0'));
    const sent = replay.find((event) => event.data.type === 'private_link')?.data;
    expect(sent).toMatchObject({ label: 'Connect tickets', linkId: expect.any(String) });
    expect(sent).not.toHaveProperty('url');

    const own = await listing(await api('/connections'));
    expect(own.items).toEqual([
      expect.objectContaining({
        server: 'tickets',
        owner: 'api:dev',
        connectedBy: expect.objectContaining({ id: 'dev' }),
      }),
    ]);
    const everyone = await listing(await api('/connections', { key: keys.admin }));
    expect(everyone.items).toHaveLength(1);
    const listed = JSON.stringify([own, everyone]);
    for (const token of provider.issuedTokens()) expect(listed).not.toContain(token);

    // Another key cannot end it; the key itself can, and the provider revokes it.
    expect(
      (await api('/connections/tickets?owner=api:dev', { method: 'DELETE', key: keys.dev })).status,
    ).toBe(200);
    expect(provider.stats().revocations).toBeGreaterThan(0);
    expect((await listing(await api('/connections'))).items).toEqual([]);
  });

  it('gives a key a link of its own, and refuses what is not its to end', async () => {
    const created = await api('/connections/tickets/link', { method: 'POST' });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({
      server: 'tickets',
      owner: 'api:dev',
      url: expect.stringMatching(/\/connect\//),
    });
    expect((await api('/connections/tickets?owner=api:admin', { method: 'DELETE' })).status).toBe(403);
    expect((await api('/connections/nope', { method: 'DELETE' })).status).toBe(404);
  });

  it('completes a flow only in the browser that opened its link, and refuses before exchanging the code', async () => {
    const linkFor = async (key: string) => {
      const created = await api('/connections/tickets/link', { method: 'POST', key });
      return String(((await created.json()) as { url: string }).url);
    };
    // Mallory opens her own link and stops at the redirect to the provider's sign-in.
    const mallory = await openLink(await linkFor(keys.mallory), app.url);
    const [cookie = ''] = mallory.cookies;
    expect(cookie).toMatch(
      /^__Host-butler-connect-[0-9a-f-]{36}=[A-Za-z0-9_-]{43}; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
    );
    // Alice, signed in at the provider, opens that sign-in in her browser: with no cookie of that flow...
    const exchanges = provider.stats().codeExchanges;
    const fresh = await signInAndReturn(mallory.authorization, 'alice@tickets', app.url, new CookieJar());
    expect(fresh.status).toBe(403);
    expect(fresh.page).toContain('did not start in this browser');
    // ...and with a cookie of a flow of her own, opened in that browser.
    const second = await openLink(await linkFor(keys.mallory), app.url);
    const alicesOwn = await openLink(await linkFor(keys.alice), app.url);
    const withOwnCookie = await signInAndReturn(
      second.authorization,
      'alice@tickets',
      app.url,
      alicesOwn.jar,
    );
    expect(withOwnCookie.status).toBe(403);
    expect(provider.stats().codeExchanges).toBe(exchanges);
    const mallorys = await listing(await api('/connections', { key: keys.mallory }));
    expect(mallorys.items).toEqual([]);
    // The flow is spent: Mallory's own browser cannot finish it with Alice's code either.
    const spent = await fetch(fresh.callback, { headers: mallory.jar.header() });
    expect(spent.status).toBe(400);
    expect(provider.stats().codeExchanges).toBe(exchanges);
    // Alice's own link still works in her browser, and the callback clears the flow's cookie.
    const own = await signInAndReturn(alicesOwn.authorization, 'alice@tickets', app.url, alicesOwn.jar);
    expect(own.status).toBe(200);
    expect(alicesOwn.jar.size).toBe(0);
  });
});
