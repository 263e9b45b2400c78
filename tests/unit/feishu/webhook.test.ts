import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFeishuConnector } from '../../../src/adapters/feishu/index.js';
import { fileConfigSchema } from '../../../src/config/file.js';
import type { FeishuConfig } from '../../../src/config/index.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { createHttpServer, type HttpServer } from '../../../src/http/server.js';
import { type CoreIntake, startCoreIntake } from '../../helpers/core-intake.js';
import { FakeFeishuApi } from '../../helpers/fake-feishu-api.js';
import {
  aliceOpenId,
  bobOpenId,
  cardActionEvent,
  challengePayload,
  type Json,
  messageEvent,
  postToButler,
  testAppId,
  testAppSecret,
  testEncryptKey,
  testVerificationToken,
} from './feishu-events.js';

let core: CoreIntake;
let fake: FakeFeishuApi;
let now = Date.now();

async function startButlerEdge(config: Partial<FeishuConfig>) {
  const connector = createFeishuConnector({
    apps: [
      {
        appId: testAppId,
        appSecret: testAppSecret,
        encryptKey: testEncryptKey,
        verificationToken: testVerificationToken,
        baseUrl: fake.baseUrl,
        connection: 'webhook',
        type: 'self_built',
        ...config,
      },
    ],
    file: fileConfigSchema.parse({}),
    intake: core.intake,
    logger: silentLogger,
    now: () => now,
  });
  const server: HttpServer = createHttpServer({
    port: 0,
    host: '127.0.0.1',
    logger: silentLogger,
    routes: connector.routes,
    readiness: async () => ({ ready: true, checks: {} }),
  });
  const port = await server.listen();
  return { connector, server, url: `http://127.0.0.1:${port}/feishu/events` };
}

beforeAll(async () => {
  core = await startCoreIntake({ approvers: { feishu: [bobOpenId] } });
  fake = await FakeFeishuApi.start();
});
afterAll(async () => {
  await fake.close();
  await core.close();
});
beforeEach(async () => {
  now = Date.now();
  await core.reset();
});

describe('Feishu webhook with an Encrypt Key', () => {
  let edge: Awaited<ReturnType<typeof startButlerEdge>>;
  beforeAll(async () => {
    edge = await startButlerEdge({});
    await edge.connector.start();
  });
  afterAll(() => edge.server.close());

  it('answers the URL verification challenge, plain or encrypted, and checks its token', async () => {
    expect(
      await postToButler(edge.url, challengePayload('c-plain'), { unsigned: true, plaintext: true }),
    ).toEqual({
      status: 200,
      body: { challenge: 'c-plain' },
    });
    expect(await postToButler(edge.url, challengePayload('c-encrypted'), { unsigned: true })).toEqual({
      status: 200,
      body: { challenge: 'c-encrypted' },
    });
    const wrong = await postToButler(edge.url, challengePayload('c-wrong', 'not-the-token'));
    expect(wrong.status).toBe(401);
  });

  it('accepts a signed, encrypted group mention and acknowledges only after the intake', async () => {
    const event = messageEvent({ messageId: 'om_w1', text: '@_user_1 deploy status?' });
    const lock = await core.holdInbox();
    const answer = postToButler(edge.url, event);
    // While the database makes the insert wait, Feishu gets no answer.
    expect(await Promise.race([answer.then(() => 'answered'), delay(300, 'waiting')])).toBe('waiting');
    await lock.release();
    expect(await answer).toEqual({ status: 200, body: {} });
    // Read right after the answer: the row was committed before the acknowledgement went out.
    expect(await core.storedMessages()).toEqual([
      expect.objectContaining({
        messageId: 'om_w1',
        text: 'deploy status?',
        isMention: true,
      }),
    ]);
  });

  it('acknowledges but ignores group messages without a mention of the bot', async () => {
    const plain = await postToButler(edge.url, messageEvent({ text: 'lunch?', mentions: [] }));
    const other = await postToButler(
      edge.url,
      messageEvent({
        text: '@_user_1 ping',
        mentions: [{ key: '@_user_1', openId: bobOpenId, name: 'Bob' }],
      }),
    );
    expect([plain.status, other.status]).toEqual([200, 200]);
    expect(await core.storedMessages()).toEqual([]);
  });

  it('hands a redelivery (same message, new event id) to the intake under the same dedup key', async () => {
    const delivery = (eventId: string) => messageEvent({ messageId: 'om_again', eventId });
    const restore = await core.refuseInboxWrites();
    expect((await postToButler(edge.url, delivery('ev_a'))).status).toBe(500);
    await restore();
    expect((await postToButler(edge.url, delivery('ev_b'))).status).toBe(200);
    expect((await postToButler(edge.url, delivery('ev_c'))).status).toBe(200);
    const stored = await core.storedMessages();
    expect(stored.map(({ dedupKey, eventId }) => ({ dedupKey, eventId }))).toEqual([
      { dedupKey: 'om_again', eventId: 'ev_b' },
    ]);
  });

  it('rejects bad signatures, stale timestamps, wrong tokens and unsigned events with 401, storing nothing', async () => {
    const cases: Array<[Json, Parameters<typeof postToButler>[2]]> = [
      [messageEvent(), { signingKey: 'forged-key' }],
      [messageEvent(), { timestamp: Math.floor(now / 1000) - 600 }],
      [messageEvent(), { timestamp: Math.floor(now / 1000) + 600 }],
      [messageEvent({ token: 'wrong-token' }), {}],
      [messageEvent(), { unsigned: true }],
    ];
    for (const [payload, options] of cases) {
      expect((await postToButler(edge.url, payload, options)).status).toBe(401);
    }
    expect(await core.storedMessages()).toEqual([]);
  });

  it('answers malformed bodies with 400 and oversized ones with 413', async () => {
    const headers = { 'content-type': 'application/json' };
    expect((await fetch(edge.url, { method: 'POST', body: '{"encrypt": 42}', headers })).status).toBe(400);
    expect((await postToButler(edge.url, { not: 'an event' }, { plaintext: true })).status).toBe(400);
    const signedGarbage = await postToButler(
      edge.url,
      { encrypt: 'bm90IGVuY3J5cHRlZA==' },
      { plaintext: true },
    );
    expect(signedGarbage.status).toBe(400);
    const huge = await fetch(edge.url, { method: 'POST', body: 'x'.repeat(2 * 1024 * 1024), headers });
    expect(huge.status).toBe(413);
  });

  it('skips messages older than the cutoff with a 200', async () => {
    const old = messageEvent({ createTime: now - 31 * 60_000 });
    expect((await postToButler(edge.url, old)).status).toBe(200);
    expect(await core.storedMessages()).toEqual([]);
  });

  it('does not acknowledge when the intake fails, so Feishu delivers again', async () => {
    const restore = await core.refuseInboxWrites();
    const answer = await postToButler(edge.url, messageEvent());
    await restore();
    expect(answer.status).toBe(500);
    expect(await core.storedMessages()).toEqual([]);
  });

  it('routes card clicks on the /feishu/card alias to decide and answers with toast and card', async () => {
    const approval = await core.pendingApproval({ platform: 'feishu', requester: { id: aliceOpenId } });
    const click = cardActionEvent({
      operatorOpenId: bobOpenId,
      value: { approval_id: approval.id, decision: 'approve' },
    });
    const answer = await postToButler(edge.url.replace('/events', '/card'), click);
    expect(await core.approval(approval.id)).toMatchObject({
      status: 'approved',
      decidedBy: { id: bobOpenId },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      toast: { type: 'success' },
      card: { type: 'raw', data: { schema: '2.0' } },
    });
    expect(JSON.stringify(answer.body)).not.toContain('"button"');
  });

  it('waits for a decision a loaded database takes 1.8 s to store and answers with its result', async () => {
    // Feishu never re-pushes a card callback: a holding answer sent first is a click lost if Butler dies
    // before storing it. 1.8 s is past the old 1.5 s wait and within the production timings.
    const slowStoreMs = 1_800;
    const approval = await core.pendingApproval({ platform: 'feishu', requester: { id: aliceOpenId } });
    const click = cardActionEvent({
      operatorOpenId: bobOpenId,
      value: { approval_id: approval.id, decision: 'approve' },
    });
    const lock = await core.holdApproval(approval.id);
    const answered = postToButler(edge.url.replace('/events', '/card'), click).then((answer) => ({
      ...answer,
      at: Date.now(),
    }));
    await delay(slowStoreMs);
    const releasedAt = Date.now();
    await lock.release();
    const answer = await answered;
    expect(answer.status).toBe(200);
    expect(answer.at).toBeGreaterThanOrEqual(releasedAt);
    expect(answer.body).toMatchObject({ toast: { type: 'success' }, card: { type: 'raw' } });
    expect((await core.approval(approval.id)).status).toBe('approved');
  });
});

describe('Feishu webhook with only a Verification Token', () => {
  it('checks the token of plaintext events and challenges', async () => {
    const edge = await startButlerEdge({ encryptKey: undefined });
    await edge.connector.start();
    const plain = { encryptKey: undefined };
    expect((await postToButler(edge.url, challengePayload('c1'), plain)).body).toEqual({ challenge: 'c1' });
    expect((await postToButler(edge.url, messageEvent({ messageId: 'om_t1' }), plain)).status).toBe(200);
    expect((await postToButler(edge.url, messageEvent({ token: 'forged' }), plain)).status).toBe(401);
    expect((await core.storedMessages()).map((message) => message.messageId)).toEqual(['om_t1']);
    await edge.server.close();
  });

  it('refuses card callbacks: unsigned, a click could be replayed or name any approver', async () => {
    const edge = await startButlerEdge({ encryptKey: undefined });
    await edge.connector.start();
    const approval = await core.pendingApproval({ platform: 'feishu', requester: { id: aliceOpenId } });
    // A plaintext callback with the right token, naming an approver: all an attacker needs without signatures.
    const forged = cardActionEvent({
      operatorOpenId: bobOpenId,
      value: { approval_id: approval.id, decision: 'approve' },
    });
    const answer = await postToButler(edge.url, forged, { encryptKey: undefined });
    expect(answer).toEqual({
      status: 200,
      body: {
        toast: {
          type: 'error',
          content: 'Butler cannot take decisions here until its admin sets an Encrypt Key.',
        },
      },
    });
    expect((await core.approval(approval.id)).status).toBe('pending');
    await edge.server.close();
  });

  it('does not acknowledge messages before the bot identity is known, and reports readiness', async () => {
    const edge = await startButlerEdge({ encryptKey: undefined });
    expect(edge.connector.readiness()).not.toBe('ok');
    expect((await postToButler(edge.url, messageEvent(), { encryptKey: undefined })).status).toBe(500);
    await edge.connector.start();
    expect(edge.connector.readiness()).toBe('ok');
    expect(fake.callsTo('GET', '/open-apis/bot/v3/info').length).toBeGreaterThan(0);
    await edge.server.close();
  });

  it('fails to start with a clear message when the credentials are wrong', async () => {
    const edge = await startButlerEdge({ appSecret: 'wrong-secret' });
    await expect(edge.connector.start()).rejects.toThrow(/bot identity.*FEISHU_APP_ID/s);
    await edge.server.close();
  });
});
