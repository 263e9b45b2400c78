import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { FakeFeishuApi } from '../../helpers/fake-feishu-api.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type OAuthMcpServer, startOAuthMcpServer } from '../../helpers/oauth-mcp-server.js';
import { messageEvent, postToButler, uniqueId } from '../../unit/feishu/feishu-events.js';
import { startFeishuButler } from '../feishu/feishu-butler.js';
import { connectThrough, linksIn, oauthEnv, oauthServerConfig, toolResultsOf } from './oauth-butler.js';

/**
 * The same connections from a Feishu group, over the real Lark SDK: each person's Connect link goes to their
 * direct chat with the bot (a card sent by open_id), never into the group, and each one's call runs as them.
 */

let fake: FakeFeishuApi;
let model: FakeModelServer;
let provider: OAuthMcpServer;
let app: TestButler;

const aliceOpenId = 'ou_alice00000000000000000000000001';
const bobOpenId = 'ou_bob0000000000000000000000000002';

beforeAll(async () => {
  fake = await FakeFeishuApi.start();
  model = await startFakeModelServer();
  provider = await startOAuthMcpServer();
  app = await startFeishuButler(fake, model, undefined, {
    env: oauthEnv,
    config: { mcpServers: oauthServerConfig(provider), tools: [] },
  });
});
afterAll(async () => {
  await app?.close();
  await provider.close();
  await model.close();
  await fake.close();
});
beforeEach(() => {
  model.reset();
});

const call = (name: string) => ({ id: uniqueId('call_'), name, arguments: '{}' });

async function ask(openId: string, text: string) {
  await postToButler(
    `${app.url}/feishu/events`,
    messageEvent({ senderOpenId: openId, threadId: uniqueId('omt_'), text: `@_user_1 ${text}` }),
  );
  await app.settle();
}

/** What Butler sent into `openId`'s direct chat. */
const directTo = (openId: string) => {
  const chatId = fake.directChats.get(openId);
  return chatId ? fake.sentMessages().filter((message) => message.chatId === chatId) : [];
};

describe('OAuth MCP connections from Feishu', () => {
  it('sends each person their Connect link in their direct chat and runs their calls as them', async () => {
    model.enqueue({ toolCalls: [call('tickets__connect')] });
    await ask(aliceOpenId, 'connect my tickets account');
    const aliceLink = linksIn(JSON.stringify(directTo(aliceOpenId))).at(0) ?? '';
    expect(aliceLink).toMatch(/\/connect\//);
    const group = fake.sentMessages().filter((message) => message.chatId === 'oc_group_chat');
    expect(JSON.stringify(group)).not.toContain('/connect/');
    model.enqueue({ toolCalls: [call('tickets__whoami')] }, { text: 'You are alice@tickets.' });
    expect((await connectThrough(aliceLink, app.url, 'alice@tickets')).status).toBe(200);
    await app.settle();

    model.enqueue({ toolCalls: [call('tickets__whoami')] });
    await ask(bobOpenId, 'who am I on tickets?');
    const bobLink = linksIn(JSON.stringify(directTo(bobOpenId))).at(0) ?? '';
    expect(bobLink).not.toBe(aliceLink);
    model.enqueue({ text: 'You are bob@tickets.' });
    expect((await connectThrough(bobLink, app.url, 'bob@tickets')).status).toBe(200);
    await app.settle();

    expect(provider.calls().map((entry) => entry.account)).toEqual(['alice@tickets', 'bob@tickets']);
    expect(Object.values(toolResultsOf(model.requests.at(-1)))).toContain('bob@tickets');
    expect(
      JSON.stringify(fake.sentMessages().filter((message) => message.chatId === 'oc_group_chat')),
    ).not.toContain('/connect/');
  });
});
