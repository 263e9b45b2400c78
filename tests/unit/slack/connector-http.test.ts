import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformConnector } from '../../../src/adapters/connector.js';
import { createSlackConnector } from '../../../src/adapters/slack/index.js';
import { fileConfigSchema } from '../../../src/config/file.js';
import { silentLogger } from '../../../src/core/logger.js';
import { createHttpServer, type HttpServer } from '../../../src/http/server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { createFakeIntake, type FakeIntake, pendingCard } from './fake-intake.js';
import {
  appMention,
  asForm,
  asJson,
  blockActions,
  botUserId,
  directMessage,
  envelope,
  messageChanged,
  ownMessage,
  postToSlack,
  rejectSubmission,
  signingSecret,
  team,
  userMessage,
} from './payloads.js';

let fake: FakeSlackApi;
let intake: FakeIntake;
let connector: PlatformConnector;
let http: HttpServer;
let url: string;

function connect(apiUrl: string) {
  return createSlackConnector({
    config: { botToken: 'xoxb-test', signingSecret, appToken: undefined, apiUrl },
    file: fileConfigSchema.parse({}),
    intake,
    logger: silentLogger,
    tuning: { apiRetries: 0 },
  });
}

beforeEach(async () => {
  fake = await startFakeSlackApi();
  intake = createFakeIntake();
  connector = connect(fake.url);
  await connector.start();
  http = createHttpServer({
    port: 0,
    host: '127.0.0.1',
    logger: silentLogger,
    routes: connector.routes,
    readiness: async () => ({ ready: true, checks: {} }),
  });
  url = `http://127.0.0.1:${await http.listen()}/slack/events`;
});

afterEach(async () => {
  await connector.stop();
  await http.close();
  await fake.close();
});

const threadTs = '1700000000.000100';

describe('Slack over HTTP: requests', () => {
  it('is ready after auth.test and serves one route', () => {
    expect([...connector.routes.keys()]).toEqual(['/slack/events']);
    expect(connector.readiness()).toBe('ok');
    expect(fake.callsTo('auth.test')).toHaveLength(1);
  });

  it('answers url_verification', async () => {
    const response = await postToSlack(
      url,
      asJson({ token: 't', challenge: 'c-123', type: 'url_verification' }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ challenge: 'c-123' });
  });

  it('acknowledges app_rate_limited notices', async () => {
    const notice = {
      token: 't',
      type: 'app_rate_limited',
      team_id: team,
      minute_rate_limited: 1518467820,
      api_app_id: 'A0BUTLER',
    };
    expect((await postToSlack(url, asJson(notice))).status).toBe(200);
    expect(intake.calls).toEqual([]);
  });

  it('answers ssl_check', async () => {
    const response = await postToSlack(url, {
      body: 'ssl_check=1&token=x',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(response.status).toBe(200);
  });

  // Timestamps are computed when each test runs: collection happens seconds earlier.
  const nowSeconds = () => Math.floor(Date.now() / 1000);
  it.each([
    ['a bad signature', () => ({ signature: 'v0=deadbeef' })],
    ['no signature', () => ({ signature: null })],
    ['a wrong secret', () => ({ secret: 'other-secret' })],
    ['a stale timestamp', () => ({ timestamp: nowSeconds() - 301 })],
    ['a future timestamp', () => ({ timestamp: nowSeconds() + 301 })],
  ])('rejects %s with 401 and stores nothing', async (_label, options) => {
    const response = await postToSlack(
      url,
      asJson(envelope(appMention({ ts: '1700000000.000100' }))),
      options(),
    );
    expect(response.status).toBe(401);
    expect(intake.calls).toEqual([]);
  });

  it('checks freshness against the injected clock', async () => {
    const past = Date.parse('2030-01-01T00:00:00Z');
    const clocked = createSlackConnector({
      config: { botToken: 'xoxb-test', signingSecret, appToken: undefined, apiUrl: fake.url },
      file: fileConfigSchema.parse({}),
      intake,
      logger: silentLogger,
      now: () => past,
      tuning: { apiRetries: 0 },
    });
    await clocked.start();
    const server = createHttpServer({
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
      routes: clocked.routes,
      readiness: async () => ({ ready: true, checks: {} }),
    });
    const clockedUrl = `http://127.0.0.1:${await server.listen()}/slack/events`;
    const challenge = asJson({ token: 't', challenge: 'c', type: 'url_verification' });
    expect((await postToSlack(clockedUrl, challenge, { timestamp: past / 1000 + 200 })).status).toBe(200);
    expect((await postToSlack(clockedUrl, challenge)).status).toBe(401);
    await clocked.stop();
    await server.close();
  });

  it('rejects malformed payloads with 400 and no retry', async () => {
    const response = await postToSlack(url, { body: '{broken', contentType: 'application/json' });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-slack-no-retry')).toBe('1');
    expect(intake.calls).toEqual([]);
  });

  it('refuses oversized bodies with 413', async () => {
    const response = await postToSlack(
      url,
      asJson({ type: 'event_callback', padding: 'x'.repeat(1_100_000) }),
    );
    expect(response.status).toBe(413);
  });

  it('answers 503 before start, so Slack retries', async () => {
    const cold = connect(fake.url);
    const route = cold.routes.get('/slack/events');
    const coldServer = createHttpServer({
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
      routes: cold.routes,
      readiness: async () => ({ ready: false, checks: {} }),
    });
    expect(route).toBeDefined();
    const coldUrl = `http://127.0.0.1:${await coldServer.listen()}/slack/events`;
    const response = await postToSlack(coldUrl, asJson(envelope(appMention({ ts: '1.1' }))));
    expect(response.status).toBe(503);
    expect(cold.readiness()).toBe('not started');
    await coldServer.close();
  });

  it('fails start with a clear error when the token is bad', async () => {
    fake.failNext('auth.test', { error: 'invalid_auth' });
    const bad = connect(fake.url);
    await expect(bad.start()).rejects.toThrow(/auth.test failed \(invalid_auth\)/);
    expect(bad.readiness()).toBe('auth.test failed: invalid_auth');
  });
});

describe('Slack over HTTP: events', () => {
  it('acknowledges a mention only after the core accepted it', async () => {
    intake.acceptDelayMs = 300;
    const started = Date.now();
    const response = await postToSlack(url, asJson(envelope(appMention({ ts: threadTs }))));
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(intake.accepted).toHaveLength(1);
    expect(intake.accepted[0]?.address).toEqual({
      platform: 'slack',
      workspace: team,
      channel: 'C0GENERAL',
      thread: threadTs,
    });
    expect(intake.accepted[0]?.text).toBe('what is the status of the deploy?');
  });

  it('answers 500 when the core cannot store the event, so Slack retries', async () => {
    intake.acceptError = new Error('database unavailable');
    const response = await postToSlack(url, asJson(envelope(appMention({ ts: threadTs }))));
    expect(response.status).toBe(500);
  });

  it('hands retries to the core with the same dedup key (answered once)', async () => {
    const payload = asJson(envelope(appMention({ ts: threadTs })));
    await postToSlack(url, payload);
    const retry = await postToSlack(url, payload, {
      headers: { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' },
    });
    expect(retry.status).toBe(200);
    expect(intake.accepted).toHaveLength(1);
    expect(intake.duplicates).toHaveLength(1);
  });

  it('answers message + app_mention of the same Slack message once', async () => {
    const address = { platform: 'slack' as const, workspace: team, channel: 'C0GENERAL', thread: threadTs };
    intake.knowConversation(address);
    const text = `<@${botUserId}> and one more thing`;
    await postToSlack(url, asJson(envelope(userMessage({ ts: '1700000000.000300', threadTs, text }))));
    await postToSlack(url, asJson(envelope(appMention({ ts: '1700000000.000300', threadTs, text }))));
    expect(intake.accepted).toHaveLength(1);
    expect(intake.duplicates).toHaveLength(1);
  });

  it('answers thread follow-ups only in threads Butler is part of, and records nothing otherwise', async () => {
    await postToSlack(url, asJson(envelope(userMessage({ ts: '1700000000.000400', threadTs }))));
    expect(intake.calls).toEqual(['isKnownConversation']);
    intake.knowConversation({ platform: 'slack', workspace: team, channel: 'C0GENERAL', thread: threadTs });
    await postToSlack(url, asJson(envelope(userMessage({ ts: '1700000000.000500', threadTs }))));
    expect(intake.accepted.map((message) => message.messageId)).toEqual(['1700000000.000500']);
  });

  it('answers DMs and ignores own messages and edits', async () => {
    await postToSlack(url, asJson(envelope(directMessage({ ts: '1700000100.000100' }))));
    await postToSlack(url, asJson(envelope(ownMessage({ ts: '1700000100.000200', threadTs }))));
    const changed = await postToSlack(url, asJson(envelope(messageChanged({ ts: '1700000100.000300' }))));
    expect(changed.status).toBe(200);
    expect(intake.accepted.map((message) => message.address.thread)).toEqual(['main']);
    expect(intake.calls).toEqual(['accept']);
  });
});

describe('Slack over HTTP: approval clicks', () => {
  const cardTs = '1700000000.000900';

  it('acknowledges at once, decides with the clicking user, and updates the card', async () => {
    intake.decideDelayMs = 1500;
    const started = Date.now();
    const response = await postToSlack(
      url,
      asForm(blockActions({ approvalId: 'ap-1', actionId: 'butler_approve', messageTs: cardTs, threadTs })),
    );
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
    const update = await fake.waitFor(() => fake.callsTo('chat.update')[0]);
    expect(intake.decisions).toEqual([
      {
        approvalId: 'ap-1',
        platform: 'slack',
        user: { id: 'U0APPROVER', name: 'approver' },
        decision: 'approve',
      },
    ]);
    expect(update.args.ts).toBe(cardTs);
    expect(JSON.stringify(update.args.blocks)).toContain('Approved by approver at 12:03 UTC');
    expect(JSON.stringify(update.args.blocks)).not.toContain('butler_approve');
  });

  it('tells an unauthorised clicker privately and leaves the card alone', async () => {
    intake.decideWith = () => ({
      ok: false,
      code: 'not_authorized',
      message: 'Only an approver may approve this.',
    });
    await postToSlack(
      url,
      asForm(
        blockActions({
          approvalId: 'ap-1',
          actionId: 'butler_approve',
          messageTs: cardTs,
          threadTs,
          user: { id: 'U0ALICE', name: 'alice' },
        }),
      ),
    );
    const ephemeral = await fake.waitFor(() => fake.callsTo('chat.postEphemeral')[0]);
    expect(ephemeral.args).toMatchObject({
      channel: 'C0GENERAL',
      user: 'U0ALICE',
      text: 'Only an approver may approve this.',
      thread_ts: threadTs,
    });
    expect(fake.callsTo('chat.update')).toHaveLength(0);
  });

  it('answers a late second click privately and redraws the decided card', async () => {
    intake.decideWith = () => ({
      ok: false,
      code: 'already_decided',
      message: 'Already approved by Ana.',
      card: { ...pendingCard, status: 'approved', decidedBy: { id: 'U0ANA', name: 'Ana' } },
    });
    await postToSlack(
      url,
      asForm(blockActions({ approvalId: 'ap-1', actionId: 'butler_approve', messageTs: cardTs })),
    );
    await fake.waitFor(() => fake.callsTo('chat.postEphemeral')[0]);
    const update = await fake.waitFor(() => fake.callsTo('chat.update')[0]);
    expect(JSON.stringify(update.args.blocks)).toContain('Approved by Ana');
  });

  it('asks for a reason in a modal and rejects on submission', async () => {
    await postToSlack(
      url,
      asForm(blockActions({ approvalId: 'ap-1', actionId: 'butler_reject', messageTs: cardTs, threadTs })),
    );
    const open = await fake.waitFor(() => fake.callsTo('views.open')[0]);
    expect(open.args.trigger_id).toBe('1337.42.abcdef');
    expect(intake.decisions).toEqual([]);
    const response = await postToSlack(
      url,
      asForm(
        rejectSubmission({
          approvalId: 'ap-1',
          messageTs: cardTs,
          threadTs,
          reason: 'not during the freeze',
        }),
      ),
    );
    expect(response.status).toBe(200);
    const update = await fake.waitFor(() => fake.callsTo('chat.update')[0]);
    expect(intake.decisions[0]).toMatchObject({
      decision: 'reject',
      reason: 'not during the freeze',
      user: { id: 'U0APPROVER' },
    });
    expect(JSON.stringify(update.args.blocks)).toContain('Rejected by approver: not during the freeze');
  });

  it('rejects without a reason when the modal cannot open', async () => {
    fake.failNext('views.open', { error: 'expired_trigger_id' });
    await postToSlack(
      url,
      asForm(blockActions({ approvalId: 'ap-1', actionId: 'butler_reject', messageTs: cardTs })),
    );
    await fake.waitFor(() => fake.callsTo('chat.update')[0]);
    expect(intake.decisions).toEqual([
      {
        approvalId: 'ap-1',
        platform: 'slack',
        user: { id: 'U0APPROVER', name: 'approver' },
        decision: 'reject',
      },
    ]);
  });
});
