import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFeishuConnector } from '../../../src/adapters/feishu/index.js';
import { fileConfigSchema } from '../../../src/config/file.js';
import type { FeishuConfig } from '../../../src/config/index.js';
import type { ButlerIntake } from '../../../src/core/adapter.js';
import type { DecisionResult } from '../../../src/core/approvals/decision.js';
import type { ApprovalDecisionInput, InboundMessage } from '../../../src/core/events.js';
import { silentLogger } from '../../../src/core/logger.js';
import { createHttpServer, type HttpServer } from '../../../src/http/server.js';
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

/** The core's intake as the webhook sees it: records what was accepted, dedups on the key like the inbox. */
class RecordingIntake implements ButlerIntake {
  readonly accepted: InboundMessage[] = [];
  readonly decisions: ApprovalDecisionInput[] = [];
  decideWith: (input: ApprovalDecisionInput) => Promise<DecisionResult> = async () => ({
    ok: false,
    code: 'not_found',
    message: 'No such approval.',
  });
  failAccept = false;

  async accept(message: InboundMessage) {
    if (this.failAccept) throw new Error('database unavailable');
    if (this.accepted.some((seen) => seen.dedupKey === message.dedupKey))
      return { status: 'duplicate' as const };
    this.accepted.push(message);
    return { status: 'accepted' as const, eventId: this.accepted.length };
  }

  async decide(input: ApprovalDecisionInput) {
    this.decisions.push(input);
    return this.decideWith(input);
  }

  async isKnownConversation() {
    return false;
  }
}

let fake: FakeFeishuApi;
let now = Date.now();

async function startButlerEdge(config: Partial<FeishuConfig>) {
  const intake = new RecordingIntake();
  const connector = createFeishuConnector({
    config: {
      appId: testAppId,
      appSecret: testAppSecret,
      encryptKey: testEncryptKey,
      verificationToken: testVerificationToken,
      baseUrl: fake.baseUrl,
      connection: 'webhook',
      ...config,
    },
    file: fileConfigSchema.parse({}),
    intake,
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
  return { intake, connector, server, url: `http://127.0.0.1:${port}/feishu/events` };
}

beforeAll(async () => {
  fake = await FakeFeishuApi.start();
});
afterAll(() => fake.close());
beforeEach(() => {
  now = Date.now();
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
    const answer = await postToButler(edge.url, event);
    expect(answer).toEqual({ status: 200, body: {} });
    expect(edge.intake.accepted.at(-1)).toMatchObject({
      messageId: 'om_w1',
      text: 'deploy status?',
      isMention: true,
    });
  });

  it('acknowledges but ignores group messages without a mention of the bot', async () => {
    const before = edge.intake.accepted.length;
    const plain = await postToButler(edge.url, messageEvent({ text: 'lunch?', mentions: [] }));
    const other = await postToButler(
      edge.url,
      messageEvent({
        text: '@_user_1 ping',
        mentions: [{ key: '@_user_1', openId: bobOpenId, name: 'Bob' }],
      }),
    );
    expect([plain.status, other.status]).toEqual([200, 200]);
    expect(edge.intake.accepted.length).toBe(before);
  });

  it('hands a redelivery (same message, new event id) to the intake under the same dedup key', async () => {
    const first = messageEvent({ messageId: 'om_again', eventId: 'ev_a' });
    const again = messageEvent({ messageId: 'om_again', eventId: 'ev_b' });
    expect((await postToButler(edge.url, first)).status).toBe(200);
    expect((await postToButler(edge.url, again)).status).toBe(200);
    expect(edge.intake.accepted.filter((message) => message.dedupKey === 'om_again')).toHaveLength(1);
  });

  it('rejects bad signatures, stale timestamps, wrong tokens and unsigned events with 401, storing nothing', async () => {
    const before = edge.intake.accepted.length;
    const cases: Array<[Json, Parameters<typeof postToButler>[2]]> = [
      [messageEvent(), { signingKey: 'forged-key' }],
      [messageEvent(), { timestamp: Math.floor(now / 1000) - 301 }],
      [messageEvent(), { timestamp: Math.floor(now / 1000) + 301 }],
      [messageEvent({ token: 'wrong-token' }), {}],
      [messageEvent(), { unsigned: true }],
    ];
    for (const [payload, options] of cases) {
      expect((await postToButler(edge.url, payload, options)).status).toBe(401);
    }
    expect(edge.intake.accepted.length).toBe(before);
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
    const before = edge.intake.accepted.length;
    const old = messageEvent({ createTime: now - 31 * 60_000 });
    expect((await postToButler(edge.url, old)).status).toBe(200);
    expect(edge.intake.accepted.length).toBe(before);
  });

  it('does not acknowledge when the intake fails, so Feishu delivers again', async () => {
    edge.intake.failAccept = true;
    const answer = await postToButler(edge.url, messageEvent());
    edge.intake.failAccept = false;
    expect(answer.status).toBe(500);
  });

  it('routes card clicks on the /feishu/card alias to decide and answers with toast and card', async () => {
    edge.intake.decideWith = async (input) => ({
      ok: true,
      card: {
        approvalId: input.approvalId,
        status: 'approved',
        toolName: 'restart_service',
        summary: 'Restart payments',
        argumentsJson: '{}',
        risk: 'high',
        requester: { id: aliceOpenId },
        whoMayApprove: 'an approver',
        approverIds: [],
        expiresAt: new Date(now + 60_000),
        decidedBy: input.user,
        decidedAt: new Date(now),
      },
    });
    const click = cardActionEvent({
      operatorOpenId: bobOpenId,
      value: { approval_id: 'appr_7', decision: 'approve' },
    });
    const answer = await postToButler(edge.url.replace('/events', '/card'), click);
    expect(edge.intake.decisions.at(-1)).toEqual({
      approvalId: 'appr_7',
      platform: 'feishu',
      user: { id: bobOpenId },
      decision: 'approve',
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      toast: { type: 'success' },
      card: { type: 'raw', data: { schema: '2.0' } },
    });
    expect(JSON.stringify(answer.body)).not.toContain('"button"');
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
    expect(edge.intake.accepted.map((message) => message.messageId)).toEqual(['om_t1']);
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
