import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { dumpDatabase } from '../../helpers/database-dump.js';
import { FakeFeishuApi } from '../../helpers/fake-feishu-api.js';
import { FakeFeishuSearch } from '../../helpers/fake-feishu-search.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import {
  messageEvent,
  postToButler,
  testAppId,
  testAppSecret,
  uniqueId,
} from '../../unit/feishu/feishu-events.js';
import {
  CookieJar,
  linksIn,
  oauthEnv,
  openLink,
  publicUrl,
  toolResultsOf,
} from '../mcp-oauth/oauth-butler.js';
import { startFeishuButler } from './feishu-butler.js';

/**
 * search_messages on Feishu over the real Lark SDK path: the asker connects their own Feishu account (a private
 * Connect link, PKCE, the JSON token endpoint), the search and the messages it names are read with their user
 * token, results from chats others in the group may not read are withheld, and nothing of them is kept. A
 * token Feishu refuses is refreshed once; a refused refresh sends a new link.
 */

let fake: FakeFeishuApi;
let search: FakeFeishuSearch;
let model: FakeModelServer;
let app: TestButler;

const alice = 'ou_alice00000000000000000000000001';
const bob = 'ou_bob0000000000000000000000000002';
const publicText = 'Rollback plan: revert payments to v41 first';
const privateText = 'Rollback budget is secret: 40k';
const externalText = 'Rollback window agreed with the vendor';

beforeAll(async () => {
  fake = await FakeFeishuApi.start();
  search = FakeFeishuSearch.attach(fake, { appId: testAppId, appSecret: testAppSecret });
  model = await startFakeModelServer();
  app = await startFeishuButler(fake, model, undefined, { env: oauthEnv });
  search.addChat({ chatId: 'oc_group_chat', name: 'team', kind: 'public', members: [alice, bob] });
  search.addChat({ chatId: 'oc_payments', name: 'payments', kind: 'public', members: [alice] });
  search.addChat({ chatId: 'oc_leads', name: 'leads', kind: 'private', members: [alice] });
  search.addChat({ chatId: 'oc_vendor', name: 'vendor', kind: 'private', members: [alice], external: true });
  search.addMessage({ chatId: 'oc_payments', sender: bob, text: publicText });
  search.addMessage({ chatId: 'oc_leads', sender: alice, text: privateText });
  search.addMessage({ chatId: 'oc_vendor', sender: alice, text: externalText });
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await fake.close();
});
beforeEach(() => {
  model.reset();
});

const searchCall = () => ({
  id: uniqueId('call_'),
  name: 'search_messages',
  arguments: '{"query":"rollback"}',
});

async function ask(text: string) {
  await postToButler(
    `${app.url}/feishu/events`,
    messageEvent({ senderOpenId: alice, threadId: uniqueId('omt_'), text: `@_user_1 ${text}` }),
  );
  await app.settle();
}

/** The Connect links Butler sent into Alice's direct chat so far. */
const aliceLinks = () => {
  const chatId = fake.directChats.get(alice);
  const sent = chatId ? fake.sentMessages().filter((message) => message.chatId === chatId) : [];
  return linksIn(JSON.stringify(sent));
};

/** Alice opens the link, Feishu's authorization page (signed in as her) sends her back to Butler's callback. */
async function connect(link: string) {
  const jar = new CookieJar();
  const { authorization } = await openLink(link, app.url, jar);
  search.signedInAs(alice);
  const signIn = await fetch(authorization, { redirect: 'manual' });
  expect(signIn.status).toBe(302);
  const back = new URL(signIn.headers.get('location') ?? '');
  expect(back.origin).toBe(publicUrl);
  const callback = await fetch(`${app.url}${back.pathname}${back.search}`, { headers: jar.header() });
  expect(callback.status).toBe(200);
  await app.settle();
  return new URL(authorization);
}

const lastToolResult = () => Object.values(toolResultsOf(model.requests.at(-1))).join('\n');

describe(`search_messages on Feishu (${databaseKind})`, () => {
  it("connects the asker's own account, searches as her, and shows the group only what it may read", async () => {
    model.enqueue({ toolCalls: [searchCall()] });
    await ask('what did we decide about the rollback?');
    const [link] = aliceLinks();
    expect(link).toBeDefined();
    const group = fake.sentMessages().filter((message) => message.chatId === 'oc_group_chat');
    expect(JSON.stringify(group)).not.toContain('/connect/');

    model.enqueue({ text: 'The team plans to revert payments to v41.' });
    const authorization = await connect(link ?? '');
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('scope')).toContain('search:message');
    const [exchange] = search.tokenRequests as Array<Record<string, unknown>>;
    expect(exchange?.grant_type).toBe('authorization_code');
    expect(exchange?.code_verifier).toEqual(expect.any(String));

    const [request] = search.searchRequests;
    expect(request?.token).toMatch(/^u-/);
    expect(request?.body).toMatchObject({ query: 'rollback' });
    expect(search.messageReads.every((read) => read.token === request?.token)).toBe(true);
    const result = lastToolResult();
    expect(result).toContain(publicText);
    expect(result).not.toContain(privateText);
    expect(result).not.toContain(externalText);
    expect(result).toContain('2 results from private conversations are not shown here');
    expect(result).toContain('applink.feishu.cn/client/chat/open?openChatId=oc_payments');

    const dump = await dumpDatabase(app);
    for (const text of [publicText, privateText, externalText, request?.token ?? 'u-'])
      expect(dump).not.toContain(text);
  });

  it('refreshes a token Feishu refuses once, and searches again with the new one', async () => {
    const before = search.searchRequests.length;
    search.revokeAccessTokens(alice);
    model.enqueue({ toolCalls: [searchCall()] }, { text: 'Found it again.' });
    await ask('and the rollback again?');
    const tries = search.searchRequests.slice(before);
    expect(tries).toHaveLength(2);
    expect(tries[0]?.token).not.toBe(tries[1]?.token);
    expect((search.tokenRequests.at(-1) as Record<string, unknown>).grant_type).toBe('refresh_token');
    expect(lastToolResult()).toContain(publicText);
  });

  it('sends a new Connect link when Feishu refuses the refresh too, and searches no further', async () => {
    const links = aliceLinks().length;
    const before = search.searchRequests.length;
    search.revokeAccessTokens(alice);
    search.refuseRefresh(alice);
    model.enqueue({ toolCalls: [searchCall()] });
    await ask('rollback, one more time?');
    expect(search.searchRequests.length - before).toBe(1);
    expect(aliceLinks().length).toBe(links + 1);
  });
});
