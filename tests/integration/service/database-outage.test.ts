import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { createPostgresDatabase, dropPostgresDatabase, testDatabaseUrl } from '../../helpers/database.js';
import { FakeFeishuApi } from '../../helpers/fake-feishu-api.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';
import {
  messageEvent as feishuMessage,
  postToButler,
  testAppId,
  testAppSecret,
  testEncryptKey,
  testVerificationToken,
  uniqueId,
} from '../../unit/feishu/feishu-events.js';
import { appMention, asJson, envelope, postToSlack, signingSecret } from '../../unit/slack/payloads.js';
import { botUserId, freshTs } from '../slack/slack-butler.js';

/**
 * Postgres goes away (stopped, or the network stalls) under a running Butler: webhooks get a 5xx inside
 * the platforms' 3 seconds (at the route deadline, 2.5 s, at the latest) so the platforms retry, /readyz says why without hanging, and once the database is back every
 * retried event is answered exactly once. Embedded PGlite cannot go away, so this runs on Postgres only.
 */

let proxy: TcpProxy;
let databaseUrl: string;
let slack: FakeSlackApi;
let feishu: FakeFeishuApi;
let model: FakeModelServer;
let app: TestButler;

beforeAll(async () => {
  if (!testDatabaseUrl) return;
  databaseUrl = await createPostgresDatabase();
  const target = new URL(databaseUrl);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  slack = await startFakeSlackApi();
  feishu = await FakeFeishuApi.start();
  model = await startFakeModelServer();
  model.setFallback({ text: 'Answered.' });
  app = await startTestButler({
    databaseUrl: proxy.via(databaseUrl),
    // The outage is the proxy's: the connection to cut is Butler's own, not a pooler's.
    direct: true,
    env: {
      SLACK_BOT_TOKEN: 'xoxb-outage',
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.url,
      FEISHU_APP_ID: testAppId,
      FEISHU_APP_SECRET: testAppSecret,
      FEISHU_ENCRYPT_KEY: testEncryptKey,
      FEISHU_VERIFICATION_TOKEN: testVerificationToken,
      FEISHU_DOMAIN: feishu.baseUrl,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
    },
  });
});
afterAll(async () => {
  if (!testDatabaseUrl) return;
  await proxy.restore();
  await app?.close();
  await proxy.close();
  await dropPostgresDatabase(databaseUrl);
  await model.close();
  await feishu.close();
  await slack.close();
});

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work();
  return { value, ms: Date.now() - started };
}

/** Both platforms deliver during the outage, must get a quick 5xx, and are answered once after it. */
async function deliverThroughOutage(breakDatabase: () => Promise<void> | void) {
  const slackPayload = asJson(
    envelope(appMention({ ts: freshTs(), text: `<@${botUserId}> during the outage` })),
  );
  const feishuEvent = feishuMessage({
    chatType: 'p2p',
    chatId: uniqueId('oc_p2p_'),
    text: 'during the outage',
  });
  const before = model.requests.length;
  await breakDatabase();

  const slackAnswer = await timed(() => postToSlack(`${app.url}/slack/events`, slackPayload));
  expect(slackAnswer.value.status).toBeGreaterThanOrEqual(500);
  expect(slackAnswer.ms).toBeLessThan(3000);
  const feishuAnswer = await timed(() => postToButler(`${app.url}/feishu/events`, feishuEvent));
  expect(feishuAnswer.value.status).toBeGreaterThanOrEqual(500);
  expect(feishuAnswer.ms).toBeLessThan(3000);
  const readiness = await timed(() => fetch(`${app.url}/readyz`));
  expect(readiness.value.status).toBe(503);
  expect(readiness.ms).toBeLessThan(1500);
  const report = (await readiness.value.json()) as { checks: { database: string } };
  expect(report.checks.database).toMatch(/^unreachable: /);
  // Metrics still answer: what the database holds is unknown (NaN), the rest is counted as usual.
  const metrics = await fetch(`${app.url}/metrics`);
  expect(metrics.status).toBe(200);
  const page = await metrics.text();
  expect(page).toMatch(/^butler_database_up 0$/m);
  expect(page).toMatch(/^butler_approvals_waiting nan$/im);
  expect(page).toMatch(/^butler_inbox_open_events nan$/im);
  expect(page).toMatch(/^butler_scheduled_tasks\{status="paused"\} nan$/im);
  expect(page).toMatch(/^process_resident_memory_bytes \d+$/m);

  await proxy.restore();
  const retried = async () => {
    const again = await postToSlack(`${app.url}/slack/events`, slackPayload, {
      headers: { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_error' },
    });
    return again.status;
  };
  // The pool reconnects on first use after the outage; a platform retries until it gets a 2xx.
  await expect.poll(retried, { timeout: 10_000, interval: 200 }).toBe(200);
  await expect
    .poll(async () => (await postToButler(`${app.url}/feishu/events`, feishuEvent)).status, {
      timeout: 10_000,
      interval: 200,
    })
    .toBe(200);
  expect(
    (await postToSlack(`${app.url}/slack/events`, slackPayload, { headers: { 'x-slack-retry-num': '2' } }))
      .status,
  ).toBe(200);
  await app.settle(15_000);
  expect(model.requests.length - before).toBe(2);
  expect((await fetch(`${app.url}/readyz`)).status).toBe(200);
}

describe.runIf(testDatabaseUrl)('a database outage under a running Butler (postgres)', () => {
  it('answers a delivery normally while the database is up', async () => {
    const response = await postToSlack(
      `${app.url}/slack/events`,
      asJson(envelope(appMention({ ts: freshTs(), text: `<@${botUserId}> hello` }))),
    );
    expect(response.status).toBe(200);
    await app.settle();
    expect(model.requests).toHaveLength(1);
  });

  it('stopped database: quick 5xx and a reason, then every retried event answered once', async () => {
    await deliverThroughOutage(() => proxy.refuse());
  }, 40_000);

  it('stalled network: quick 5xx instead of a hang, then every retried event answered once', async () => {
    await deliverThroughOutage(() => proxy.blackhole());
  }, 40_000);
});
