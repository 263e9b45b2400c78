import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { type OAuthMcpServer, startOAuthMcpServer } from '../../helpers/oauth-mcp-server.js';
import { appMention, asJson, envelope, postToSlack } from '../../unit/slack/payloads.js';
import { freshTs, startSlackButler } from '../slack/slack-butler.js';
import { connectThrough, linksIn, oauthEnv, publicUrl, toolResultsOf } from './oauth-butler.js';

/**
 * Client ID Metadata Documents: Butler serves its own at BUTLER_PUBLIC_URL/oauth/client-metadata.json, and an
 * authorization server that takes them (`client_id_metadata_document_supported`) gets that URL as Butler's
 * client id, reads the document from it, and Butler registers nowhere. `clientMetadataUrl: false` opts out.
 */

let fake: FakeSlackApi;
let model: FakeModelServer;
let provider: OAuthMcpServer;
let app: TestButler;

const documentUrl = `${publicUrl}/oauth/client-metadata.json`;
/** The provider's HTTP client: Butler's public URL is this test's Butler. */
const fetchDocument = async (url: string) => {
  const answer = await fetch(url.replace(publicUrl, app.url));
  return answer.ok ? answer.json() : undefined;
};

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  provider = await startOAuthMcpServer({ fetchClientMetadata: fetchDocument });
  app = await startSlackButler(fake, model, undefined, {
    env: oauthEnv,
    config: {
      mcpServers: [{ name: 'tickets', url: provider.url, oauth: { identity: 'person' } }],
      tools: [],
    },
  });
});
afterAll(async () => {
  await app?.close();
  await provider.close();
  await model.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  model.reset();
});

const call = (name: string) => ({ id: `call_${name}_${freshTs()}`, name, arguments: '{}' });

async function askAs(target: TestButler, user: string, text: string) {
  await postToSlack(
    `${target.url}/slack/events`,
    asJson(envelope(appMention({ ts: freshTs(), user, text: `<@U0BUTLER> ${text}` }))),
  );
  await target.settle();
  const shown = fake.callsTo('chat.postEphemeral').filter((entry) => entry.args.user === user);
  return linksIn(JSON.stringify(shown.at(-1)?.args ?? {})).at(0) ?? '';
}

describe('Client ID Metadata Documents', () => {
  it('serves Butler’s document: its own URL as client_id, its callback as the only redirect URI, no secret', async () => {
    const answer = await fetch(`${app.url}/oauth/client-metadata.json`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(await answer.json()).toEqual({
      client_id: documentUrl,
      client_name: 'Butler',
      client_uri: publicUrl,
      redirect_uris: [`${publicUrl}/oauth/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect((await fetch(`${app.url}/oauth/client-metadata.json`, { method: 'POST' })).status).toBe(405);
  });

  it('connects with its document URL as client id where the server takes it, registering nowhere', async () => {
    model.enqueue({ toolCalls: [call('tickets__connect')] });
    const link = await askAs(app, 'U0ALICE', 'connect my tickets account');
    model.enqueue({ text: 'Connected.' });
    const connected = await connectThrough(link, app.url, 'alice@tickets');
    expect(connected.status).toBe(200);
    expect(connected.authorization.searchParams.get('client_id')).toBe(documentUrl);
    await app.settle();
    expect(Object.values(toolResultsOf(model.requests.at(-1))).join()).toMatch(/tickets is connected as/);
    expect(provider.stats()).toMatchObject({ registrations: 0, codeExchanges: 1 });
    expect(provider.stats().metadataFetches).toBeGreaterThan(0);
  });

  it('registers as before with clientMetadataUrl: false', async () => {
    const other = await startOAuthMcpServer({ fetchClientMetadata: fetchDocument });
    const optedOut = await startSlackButler(fake, model, undefined, {
      env: oauthEnv,
      config: {
        mcpServers: [
          { name: 'tickets', url: other.url, oauth: { identity: 'person', clientMetadataUrl: false } },
        ],
        tools: [],
      },
    });
    try {
      model.enqueue({ toolCalls: [call('tickets__connect')] });
      const link = await askAs(optedOut, 'U0BOB', 'connect my tickets account');
      model.enqueue({ text: 'Connected.' });
      const connected = await connectThrough(link, optedOut.url, 'bob@tickets');
      expect(connected.status).toBe(200);
      expect(connected.authorization.searchParams.get('client_id')).not.toBe(documentUrl);
      expect(other.stats()).toMatchObject({ registrations: 1, metadataFetches: 0 });
    } finally {
      await optedOut.close();
      await other.close();
    }
  });
});
