import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type OAuthMcpServer, startOAuthMcpServer } from '../../helpers/oauth-mcp-server.js';
import { readEvents, types } from '../../helpers/sse-client.js';
import { connectThrough, oauthEnv, oauthServerConfig } from './oauth-butler.js';

/**
 * Connections over the HTTP API: the Connect link reaches the key on its own stream (`private_link`, then
 * `connection_required` ends the stream), the turn goes on once connected, and `/connections` lists and ends
 * a key's own connections without ever showing a token; an admin key sees everyone's.
 */

const keys = { dev: 'dev-key-0123456789abcdef', admin: 'admin-key-0123456789abcdef' };
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
    },
    config: {
      mcpServers: oauthServerConfig(provider),
      api: {
        keys: [
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'dev', key: '${KEY_DEV}', scopes: ['chat'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'admin', key: '${KEY_ADMIN}', scopes: ['chat', 'read'] },
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

    model.enqueue({ text: 'Connected.' });
    expect((await connectThrough(link, app.url, 'dev@tickets')).status).toBe(200);
    await app.settle();

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
});
