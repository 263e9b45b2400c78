import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { dumpDatabase } from '../../helpers/database-dump.js';
import type { FakeFeishuApi, RecordedCall } from '../../helpers/fake-feishu-api.js';
import { FakeFeishuApi as FakeFeishu } from '../../helpers/fake-feishu-api.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { lastUserContent, serviceTools, startPlatformButler } from '../../helpers/platform-butler.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { waitFor } from '../../helpers/wait-for.js';
import {
  cardActionEvent,
  type Json,
  messageEvent,
  postToButler,
  testAppId,
  testAppSecret,
  testEncryptKey,
  testVerificationToken,
  uniqueId,
} from '../../unit/feishu/feishu-events.js';
import { approverOpenId, repliesTo } from './feishu-butler.js';

/**
 * Several Feishu apps and a store app, over the real Lark SDK path: each tenant's events reach Butler on its
 * app's own path, each reply carries that app's (and tenant's) token and nobody else's, and the same chat and
 * person ids in two tenants are two conversations.
 */

/** `${NAME}` as the config file writes it. */
const ref = (name: string) => `\${${name}}`;

const secretKey = 'ab'.repeat(32);
const adminKey = 'admin-key-0123456789abcdef';
const secondApp = {
  appId: 'cli_b2b2b2b2b2b2b2b2',
  appSecret: 'second-app-secret',
  encryptKey: 'second-encrypt-key',
  verificationToken: 'second-verification-token',
};
const storeApp = {
  appId: 'cli_5705e5705e5705e5',
  appSecret: 'store-app-secret',
  encryptKey: 'store-encrypt-key',
  verificationToken: 'store-verification-token',
};

/** `payload` (a message or a click) as another app and tenant would send it: the header and the person name them. */
function inTenant(payload: Json, app: { appId: string; verificationToken: string }, tenantKey: string): Json {
  const header = {
    ...(payload.header as Json),
    app_id: app.appId,
    tenant_key: tenantKey,
    token: app.verificationToken,
  };
  const event = { ...(payload.event as Json) };
  for (const person of ['sender', 'operator'])
    if (event[person]) event[person] = { ...(event[person] as Json), tenant_key: tenantKey };
  return { ...payload, header, event };
}

/** A v1 event (`app_ticket`, `app_uninstalled`) as Feishu pushes it to a store app. */
function v1Event(type: string, fields: Json, token = storeApp.verificationToken): Json {
  return {
    uuid: uniqueId('uuid'),
    token,
    ts: String(Date.now() / 1000),
    type: 'event_callback',
    event: { app_id: storeApp.appId, type, ...fields },
  };
}

/** The app and tenant whose token each of these calls carried. */
function ownersOf(fake: FakeFeishuApi, calls: RecordedCall[]): string[] {
  return [
    ...new Set(
      calls.map((call) => {
        const owner = fake.auth.ownerOf(call);
        return owner ? `${owner.appId}/${owner.tenantKey ?? 'own'}` : 'default token';
      }),
    ),
  ];
}

const replyCalls = (fake: FakeFeishuApi, messageId: string) =>
  fake.calls.filter((call) => call.path === `/open-apis/im/v1/messages/${messageId}/reply`);

describe('two self-built Feishu apps, one tenant each', () => {
  let fake: FakeFeishuApi;
  let model: FakeModelServer;
  let app: TestButler;
  const pathOf = (appId: string) => `${app.url}/feishu/${appId}/events`;

  beforeAll(async () => {
    fake = await FakeFeishu.start();
    fake.auth.add({ appId: testAppId, appSecret: testAppSecret, type: 'self_built' });
    fake.auth.add({ appId: secondApp.appId, appSecret: secondApp.appSecret, type: 'self_built' });
    model = await startFakeModelServer();
    app = await startPlatformButler('feishu', {
      env: {
        FEISHU_APP_ID: testAppId,
        FEISHU_APP_SECRET: testAppSecret,
        FEISHU_ENCRYPT_KEY: testEncryptKey,
        FEISHU_VERIFICATION_TOKEN: testVerificationToken,
        SECOND_APP_SECRET: secondApp.appSecret,
        SECOND_ENCRYPT_KEY: secondApp.encryptKey,
        FEISHU_DOMAIN: fake.baseUrl,
        BUTLER_BASE_URL: model.baseUrl,
        BUTLER_MODEL: 'test-model',
      },
      config: {
        feishu: {
          apps: [
            {
              appId: secondApp.appId,
              appSecret: ref('SECOND_APP_SECRET'),
              encryptKey: ref('SECOND_ENCRYPT_KEY'),
              verificationToken: secondApp.verificationToken,
            },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
    await model?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.calls.length = 0;
    model.reset();
  });

  it('answers each app on its own path with its own token, and keeps the same chat and person ids apart', async () => {
    const first = uniqueId('om_');
    model.enqueue({ text: 'Noted for the first company.' });
    const toFirst = inTenant(
      messageEvent({ messageId: first, chatId: 'oc_same_chat', text: '@_user_1 the launch code is tulip' }),
      { appId: testAppId, verificationToken: testVerificationToken },
      'tenant_first',
    );
    expect((await postToButler(pathOf(testAppId), toFirst)).status).toBe(200);
    await app.settle();

    const second = uniqueId('om_');
    model.enqueue({ text: 'Hello, second company.' });
    const toSecond = inTenant(
      messageEvent({ messageId: second, chatId: 'oc_same_chat', text: '@_user_1 what is the launch code?' }),
      secondApp,
      'tenant_second',
    );
    const answer = await postToButler(pathOf(secondApp.appId), toSecond, {
      encryptKey: secondApp.encryptKey,
    });
    expect(answer.status).toBe(200);
    await app.settle();

    expect(repliesTo(fake, first)).toHaveLength(1);
    expect(repliesTo(fake, second)).toHaveLength(1);
    expect(ownersOf(fake, replyCalls(fake, first))).toEqual([`${testAppId}/own`]);
    expect(ownersOf(fake, replyCalls(fake, second))).toEqual([`${secondApp.appId}/own`]);
    // Same chat id, same sender open_id, another tenant: another conversation, which never saw the first.
    expect(model.requests).toHaveLength(2);
    expect(JSON.stringify(model.requests[1]?.messages)).not.toContain('tulip');
    expect(lastUserContent(model, 1)).toContain('what is the launch code?');
  });

  it("refuses one app's delivery on another app's path, and drops an app's event for a tenant another app serves", async () => {
    const signedByFirst = inTenant(
      messageEvent({ text: '@_user_1 hello' }),
      { appId: testAppId, verificationToken: testVerificationToken },
      'tenant_first',
    );
    expect((await postToButler(pathOf(secondApp.appId), signedByFirst)).status).toBe(401);

    const crossing = inTenant(
      messageEvent({ text: '@_user_1 hello from the wrong app' }),
      { appId: testAppId, verificationToken: testVerificationToken },
      'tenant_second',
    );
    expect((await postToButler(pathOf(testAppId), crossing)).status).toBe(200);
    await app.settle();
    expect(model.requests).toHaveLength(0);
    expect(fake.calls.filter((call) => call.path.startsWith('/open-apis/im/'))).toHaveLength(0);
  });

  it('keeps /feishu/events for the first app, where it was before there were others', async () => {
    const messageId = uniqueId('om_');
    model.enqueue({ text: 'Same place as ever.' });
    const toFirst = inTenant(
      messageEvent({ messageId, text: '@_user_1 still there?' }),
      { appId: testAppId, verificationToken: testVerificationToken },
      'tenant_first',
    );
    expect((await postToButler(`${app.url}/feishu/events`, toFirst)).status).toBe(200);
    await app.settle();
    expect(ownersOf(fake, replyCalls(fake, messageId))).toEqual([`${testAppId}/own`]);
    // The second app's deliveries are not taken there.
    const toSecond = inTenant(messageEvent({ text: '@_user_1 hi' }), secondApp, 'tenant_second');
    const refused = await postToButler(`${app.url}/feishu/events`, toSecond, {
      encryptKey: secondApp.encryptKey,
    });
    expect(refused.status).toBe(401);
  });
});

describe('a store app (ISV) installed in two tenants', () => {
  let fake: FakeFeishuApi;
  let model: FakeModelServer;
  let tools: ToolServer;
  let app: TestButler;
  const dataDir = mkdtempSync(join(tmpdir(), 'butler-feishu-store-'));
  const url = () => `${app.url}/feishu/events`;
  const storeOptions = () => ({
    env: {
      FEISHU_APP_ID: storeApp.appId,
      FEISHU_APP_SECRET: storeApp.appSecret,
      FEISHU_APP_TYPE: 'isv',
      FEISHU_ENCRYPT_KEY: storeApp.encryptKey,
      FEISHU_VERIFICATION_TOKEN: storeApp.verificationToken,
      FEISHU_DOMAIN: fake.baseUrl,
      BUTLER_SECRET_KEY: secretKey,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
    },
    config: {
      approvers: { feishu: [approverOpenId] },
      tools: serviceTools(tools),
      api: { keys: [{ name: 'admin', key: adminKey, scopes: ['read'] }] },
    },
    dataDir,
    ...(app?.databaseUrl ? { databaseUrl: app.databaseUrl } : {}),
  });
  const post = (payload: Json) => postToButler(url(), payload, { encryptKey: storeApp.encryptKey });
  const mention = (tenantKey: string, messageId: string, text: string) =>
    post(
      inTenant(
        messageEvent({ messageId, chatId: 'oc_same_chat', text: `@_user_1 ${text}` }),
        storeApp,
        tenantKey,
      ),
    );
  const tokenRequests = () => fake.callsTo('POST', '/open-apis/auth/v3/tenant_access_token').length;
  const readiness = async () => {
    const ready = (await (await fetch(`${app.url}/readyz`)).json()) as { checks: Record<string, string> };
    return ready.checks.feishu;
  };

  beforeAll(async () => {
    fake = await FakeFeishu.start();
    fake.auth.add({ appId: storeApp.appId, appSecret: storeApp.appSecret, type: 'isv' });
    model = await startFakeModelServer();
    tools = await startToolServer();
    app = await startPlatformButler('feishu', storeOptions());
  });
  afterAll(async () => {
    await app?.close();
    await model?.close();
    await tools?.close();
    await fake?.close();
  });

  it('asks Feishu for its app_ticket at start-up, keeps the pushed one sealed, and answers each tenant with its own token', async () => {
    await waitFor(() => (fake.auth.resends.get(storeApp.appId) ?? 0) > 0, 10_000);
    const ticket = fake.auth.tickets.get(storeApp.appId) as string;
    expect((await post(v1Event('app_ticket', { app_ticket: ticket }))).status).toBe(200);

    model.enqueue({ text: 'Noted for the first tenant.' });
    const first = uniqueId('om_');
    expect((await mention('tenant_one', first, 'the launch code is tulip')).status).toBe(200);
    await app.settle();
    model.enqueue({ text: 'Hello, second tenant.' });
    const second = uniqueId('om_');
    expect((await mention('tenant_two', second, 'what is the launch code?')).status).toBe(200);
    await app.settle();

    expect(ownersOf(fake, replyCalls(fake, first))).toEqual([`${storeApp.appId}/tenant_one`]);
    expect(ownersOf(fake, replyCalls(fake, second))).toEqual([`${storeApp.appId}/tenant_two`]);
    // Who the bot is, asked in each tenant with that tenant's token.
    expect(ownersOf(fake, fake.callsTo('GET', '/open-apis/bot/v3/info'))).toEqual([
      `${storeApp.appId}/tenant_one`,
      `${storeApp.appId}/tenant_two`,
    ]);
    expect(JSON.stringify(model.requests[1]?.messages)).not.toContain('tulip');

    await expect.poll(readiness, { timeout: 10_000 }).toBe('ok (2 tenants)');
    const dump = await dumpDatabase(app);
    expect(dump).toContain('tenant_one');
    expect(dump).not.toContain(ticket);
    for (const token of fake.auth.tenantTokens.keys()) expect(dump).not.toContain(token);
  });

  /** A restart of payments-api asked in `tenantKey`: the card Butler posted and its approval id. */
  async function askRestart(tenantKey: string) {
    model.enqueue({
      toolCalls: [
        { id: uniqueId('call_'), name: 'restart_service', arguments: '{"service":"payments-api"}' },
      ],
    });
    const asked = uniqueId('om_');
    await mention(tenantKey, asked, 'restart payments-api');
    await app.settle();
    const card = repliesTo(fake, asked).find((message) =>
      JSON.stringify(message.content).includes('approval_id'),
    );
    const approvalId = /"approval_id":"([^"]+)"/.exec(JSON.stringify(card?.content))?.[1] as string;
    return { asked, card, approvalId };
  }

  it("takes a tenant's approval click and updates its card with that tenant's token", async () => {
    const { asked, card, approvalId } = await askRestart('tenant_two');
    model.enqueue({ text: 'Restarted payments-api.' });
    expect(ownersOf(fake, replyCalls(fake, asked))).toEqual([`${storeApp.appId}/tenant_two`]);

    const clickCard = (value: Json) =>
      postToButler(
        `${app.url}/feishu/card`,
        inTenant(
          cardActionEvent({ operatorOpenId: approverOpenId, messageId: card?.messageId as string, value }),
          storeApp,
          'tenant_two',
        ),
        { encryptKey: storeApp.encryptKey },
      );
    // "Show all arguments" posts them below the card, from the click's own tenant.
    expect((await clickCard({ show_arguments: approvalId })).status).toBe(200);
    await waitFor(() => repliesTo(fake, card?.messageId as string).length > 0, 10_000);
    expect(ownersOf(fake, replyCalls(fake, card?.messageId as string))).toEqual([
      `${storeApp.appId}/tenant_two`,
    ]);

    expect((await clickCard({ approval_id: approvalId, decision: 'approve' })).status).toBe(200);
    await app.settle();
    expect(tools.requests.map((request) => request.path)).toEqual(['/restart_service']);
    const patches = fake.calls.filter(
      (call) => call.method === 'PATCH' && call.path.endsWith(card?.messageId as string),
    );
    expect(patches.length).toBeGreaterThan(0);
    expect(ownersOf(fake, patches)).toEqual([`${storeApp.appId}/tenant_two`]);
  });

  it('keeps the ticket and the tenant tokens across a restart: no resend, no new token', async () => {
    const resends = fake.auth.resends.get(storeApp.appId);
    const tokens = tokenRequests();
    await app.stop();
    app = await startPlatformButler('feishu', storeOptions());

    model.enqueue({ text: 'Still here.' });
    const messageId = uniqueId('om_');
    await mention('tenant_one', messageId, 'are you there?');
    await app.settle();
    expect(repliesTo(fake, messageId)).toHaveLength(1);
    expect(ownersOf(fake, replyCalls(fake, messageId))).toEqual([`${storeApp.appId}/tenant_one`]);
    expect(tokenRequests()).toBe(tokens);
    expect(fake.auth.resends.get(storeApp.appId)).toBe(resends);
  });

  it('pauses a tenant’s scheduled tasks and pending approvals when the app is uninstalled there, and resumes them when it is back', async () => {
    const task = await app.butler.schedules.create({
      creator: {
        platform: 'feishu',
        id: 'ou_alice0000000000000000000000001',
        name: 'Alice',
        timezone: 'UTC',
      },
      address: { platform: 'feishu', workspace: 'tenant_two', channel: 'oc_same_chat', thread: 'main' },
      prompt: 'post the on-call rota',
      cron: '0 9 * * *',
      isDirect: false,
      source: 'chat',
    });
    const statusOf = async () => (await app.butler.store.schedules.get(task.schedule.id))?.status;
    const waiting = await askRestart('tenant_two');
    const before = await app.butler.store.approvals.get(waiting.approvalId);
    expect((await post(v1Event('app_uninstalled', { tenant_key: 'tenant_two' }))).status).toBe(200);
    expect(await statusOf()).toBe('paused');
    await expect.poll(readiness, { timeout: 10_000 }).toBe('ok (1 tenant)');
    const listed = await fetch(`${app.url}/api/v1/installations`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const { items } = (await listed.json()) as { items: Array<Record<string, unknown>> };
    expect(
      items.map(({ platform, workspace, app: served, state }) => [platform, workspace, served, state]),
    ).toEqual([
      ['feishu', 'tenant_one', storeApp.appId, 'active'],
      ['feishu', 'tenant_two', storeApp.appId, 'uninstalled'],
    ]);
    // The request waits with its workspace: a sweep a month on leaves it pending.
    const month = new Date(Date.now() + 30 * 86_400_000);
    expect((await app.butler.store.approvals.expireDue(month)).map((approval) => approval.id)).not.toContain(
      waiting.approvalId,
    );
    expect((await app.butler.store.feishuTenants.get('tenant_one'))?.uninstalledAt).toBeUndefined();

    // Its token went with it: the tenant's next event, once the app is back, gets a new one.
    const tokens = tokenRequests();
    model.enqueue({ text: 'Back in the second tenant.' });
    const messageId = uniqueId('om_');
    await mention('tenant_two', messageId, 'are you back?');
    await app.settle();
    expect(await statusOf()).toBe('active');
    expect(tokenRequests()).toBe(tokens + 1);
    // Back, the request has the time it had left.
    const after = await app.butler.store.approvals.get(waiting.approvalId);
    expect(after?.status).toBe('pending');
    expect(after?.expiresAt.getTime()).toBeGreaterThan(
      before?.expiresAt.getTime() ?? Number.POSITIVE_INFINITY,
    );
    expect(ownersOf(fake, replyCalls(fake, messageId))).toEqual([`${storeApp.appId}/tenant_two`]);
  });
});
